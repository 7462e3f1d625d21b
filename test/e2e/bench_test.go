package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/caravan-dev/caravan/internal/bench/result"
	"github.com/caravan-dev/caravan/test/harness"
)

// clusterDir finds, in the bench's progress, the directory of the local
// cluster it started.
var clusterDir = regexp.MustCompile(`starting a local cluster in (\S+)`)

// TestBenchMeasuresTheRolloutAndTheHandoffAndLeavesNothingBehind runs the
// bench at a small scale: every phase of the rollout (the floor, Caravan,
// the bare operator) and the hand-off run for real on a cluster of its
// own, the figures are written, and nothing is left behind.
func TestBenchMeasuresTheRolloutAndTheHandoffAndLeavesNothingBehind(t *testing.T) {
	g := NewWithT(t)
	out := t.TempDir()
	stdout, stderr, err := caravan("bench", "--scenarios", "rollout,handoff,build,runtime,admission,recovery,malformed", "-N", "12", "--operators", "2",
		"--admission-creates", "20", "--admission-operators", "1,3", "--build-integrations", "2", "--build-dependency-sets", "1",
		"--runtime-integrations", "1", "--runtime-moves", "3",
		"--handoff-integrations", "4", "--sweep-integrations", "6", "--sweep-operators", "1", "--out", out,
		// Seven scenarios take about 8 minutes alone; the other test packages share the two cores.
		"--timeout", "25m")
	g.Expect(err).NotTo(HaveOccurred(), "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	g.Expect(stdout).To(ContainSubstring("the least an operator can do"))
	g.Expect(stdout).To(ContainSubstring("time against CPU"), "each phase's time beside the CPU it used")

	data, err := os.ReadFile(filepath.Join(out, "bench.json"))
	g.Expect(err).NotTo(HaveOccurred())
	var res result.Results
	g.Expect(json.Unmarshal(data, &res)).To(Succeed())
	r := res.Rollout
	g.Expect(r).NotTo(BeNil())
	g.Expect(r.FloorSeconds).To(BeNumerically(">", 0))
	g.Expect(r.CaravanSeconds).To(BeNumerically(">", 0))
	g.Expect(r.CaravanCurve).NotTo(BeEmpty())
	g.Expect(r.CaravanCurve[len(r.CaravanCurve)-1].Count).To(Equal(12), "all integrations Ready")
	g.Expect(r.WritesByKind).To(HaveKeyWithValue("patch deployments", BeNumerically(">=", 1)))
	t.Log("each operator's memory is split: its own (anonymous) below its resident memory, which counts its binary's pages")
	g.Expect(r.PerOperator).To(HaveLen(2))
	for _, f := range r.PerOperator {
		g.Expect(f.IdleOwnMiB).To(BeNumerically(">", 0), "operator %s", f.ID)
		g.Expect(f.IdleOwnMiB).To(BeNumerically("<", f.IdleRSSMiB), "operator %s", f.ID)
		g.Expect(f.IdlePSSMiB).To(BeNumerically(">=", f.IdleOwnMiB), "operator %s", f.ID)
		g.Expect(f.PeakOwnMiB).To(BeNumerically(">", 0), "operator %s", f.ID)
	}
	b := r.Bare
	g.Expect(b.Seconds).To(BeNumerically(">", 0))
	g.Expect(b.Curve).NotTo(BeEmpty())
	g.Expect(b.Curve[len(b.Curve)-1].Count).To(Equal(12), "all the bare operator's integrations Ready")
	g.Expect(b.WritesByKind).To(Equal(map[string]float64{"create deployments": 1, "patch integrations/status": 1}),
		"the bare operator makes the Deployment and writes the status once, nothing else")
	g.Expect(r.APIServerCPUByWork).NotTo(BeEmpty())
	t.Log("the events the API server sent its watchers: each phase's Deployments, and the Integrations of the operators' phases")
	g.Expect(r.FloorWatchEvents).To(HaveKeyWithValue("deployments.apps", BeNumerically(">", 0)))
	g.Expect(r.CaravanWatchEvents).To(HaveKeyWithValue("integrations.camel.apache.org", BeNumerically(">", 0)))
	g.Expect(b.WatchEvents).To(HaveKeyWithValue("integrations.camel.apache.org", BeNumerically(">", 0)))
	g.Expect(stdout).To(ContainSubstring("events the API server sent its watchers"))
	h := res.Handoff
	g.Expect(h).NotTo(BeNil())
	g.Expect(h.MoveTimes).To(HaveLen(4))
	g.Expect(h.PodsStarted).To(BeZero(), "a move restarts no pod")
	t.Log("the build scenario: Maven kits cold, cached and on another kit, the Kamelet catalog and kits of a catalog Kamelet's dependencies, " +
		"then 2 integrations on one set, moved to an operator that makes the same kit")
	bld := res.Build
	g.Expect(bld).NotTo(BeNil())
	g.Expect(bld.Kits).To(HaveLen(6))
	g.Expect(bld.Catalog).NotTo(BeNil())
	g.Expect(bld.Catalog.Kamelets).To(BeNumerically(">", 200), "the catalog of camel-kamelets 4.18.0 holds 248 Kamelets")
	g.Expect(bld.Catalog.ApplySeconds).To(BeNumerically(">", 0))
	kameletCold, kameletWarm := bld.Kits[4], bld.Kits[5]
	g.Expect(kameletCold.DownloadedFiles).To(BeNumerically(">", 0), "the Kamelet's dependencies are downloaded once")
	g.Expect(kameletWarm.DownloadedFiles).To(BeZero(), "the cache holds the Kamelet's dependencies")
	cold, plusOne, cached := bld.Kits[0], bld.Kits[1], bld.Kits[2]
	g.Expect(cold.DownloadedFiles).To(BeNumerically(">", 100), "a cold cache downloads the runtime's jars")
	g.Expect(cold.Parent).To(BeEmpty())
	g.Expect(plusOne.Parent).NotTo(BeEmpty(), "one more dependency builds on the runtime's kit")
	g.Expect(plusOne.LayersReused).To(Equal(plusOne.Layers-1), "it reuses every layer of the kit it builds on")
	g.Expect(cached.DownloadedFiles).To(BeZero(), "the cache holds the runtime's jars")
	g.Expect(bld.Builds).To(Equal(1), "two integrations of one set share a kit")
	g.Expect(bld.MoveBuilds).To(BeZero(), "the new owner, which makes the same kit, built one")
	g.Expect(bld.MoveKitsAdopted).To(Equal(1), "the new owner's kit wraps the image the pods run")
	g.Expect(bld.Move.PodsStarted).To(BeZero(), "a move to an operator of the same kits started pods")
	g.Expect(stdout).To(ContainSubstring("Kits built one at a time by Maven"))
	t.Log("the runtime scenario: a real JVM's first message cold, warm and on an existing kit, beside the floor's, and its idle memory")
	rt := res.Runtime
	g.Expect(rt).NotTo(BeNil())
	g.Expect(rt.ColdSeconds).To(BeNumerically(">", 0), "a first message after a kit built with an empty cache")
	g.Expect(rt.WarmSeconds).To(BeNumerically(">", 0), "a first message after one more dependency on that kit")
	g.Expect(rt.ExistingSeconds.Count).To(Equal(1))
	g.Expect(rt.FloorSeconds.Count).To(Equal(1))
	g.Expect(rt.Ratio).To(BeNumerically(">", 0))
	g.Expect(rt.Idle.RSSMiB).To(BeNumerically(">", 20), "an idle JVM holds some memory")
	g.Expect(rt.FloorIdle.RSSMiB).To(BeNumerically(">", 20))
	g.Expect(stdout).To(ContainSubstring("Runtime: a timer route as real JVMs"))
	t.Log("the runtime scenario's canaries: 3 JVMs moved in 2 waves keep their pods and lose no tick; moved on to another base image, they roll")
	mv := rt.Move
	g.Expect(mv).NotTo(BeNil())
	g.Expect(mv.Integrations).To(Equal(3))
	g.Expect(mv.WaveSeconds).To(HaveLen(2))
	g.Expect(mv.MoveTimes).To(HaveLen(3))
	g.Expect(mv.Builds).To(BeZero(), "the operator that makes the same kits built")
	g.Expect(mv.KitsAdopted).To(Equal(2), "one kit per set: camel:jackson, and camel:http on it")
	g.Expect(mv.PodsStarted).To(BeZero())
	g.Expect(mv.Restarts).To(BeZero())
	g.Expect(mv.LostTicks).To(BeZero())
	g.Expect(mv.Gaps).To(BeEmpty())
	roll := rt.Roll
	g.Expect(roll).NotTo(BeNil())
	g.Expect(roll.Builds).To(Equal(2), "the operator of another base image builds both sets")
	g.Expect(roll.KitsAdopted).To(BeZero())
	g.Expect(roll.PodsStarted).To(BeNumerically(">=", 3), "every pod rolls to the new kits")
	g.Expect(roll.MinReadyPods).To(Equal(1), "a roll left an integration without a ready pod")
	g.Expect(stdout).To(ContainSubstring("Runtime, moved: 3 running JVMs moved runtime-a -> runtime-b"))
	g.Expect(stdout).To(ContainSubstring("Runtime, rolled: the same moved on runtime-b -> runtime-c"))
	t.Log("the admission scenario: 20 creates with 1 and 3 operators registered, serving every namespace, then limited")
	g.Expect(res.Admission).NotTo(BeNil())
	g.Expect(res.Admission.Points).To(HaveLen(4))
	for i, p := range res.Admission.Points {
		g.Expect(p.Operators).To(Equal([]int{1, 3, 1, 3}[i]))
		g.Expect(p.Limited).To(Equal(i >= 2))
		g.Expect(p.Registrations).To(BeNumerically(">=", p.Operators+2), "the bench's two operators are registered too")
		g.Expect(p.APIServerMillisPerCreate).To(BeNumerically(">", 0))
	}
	g.Expect(stdout).To(ContainSubstring("Admission: 20 assigned Integrations created in one burst"))
	t.Log("the recovery scenario: the operator's pod killed during a burst of 12, every integration Ready after, one Deployment each")
	g.Expect(res.Recovery).NotTo(BeNil())
	g.Expect(res.Recovery.RecoverySeconds).To(BeNumerically(">", 0))
	g.Expect(res.Recovery.Deployments).To(Equal(12))
	t.Log("the malformed scenario: 12 valid integrations alone, then beside 12 malformed ones; each malformed one gets its reason and no Deployment")
	mal := res.Malformed
	g.Expect(mal).NotTo(BeNil())
	g.Expect(mal.Alone.ValidReadySeconds).To(BeNumerically(">", 0))
	g.Expect(mal.Beside.ValidReadySeconds).To(BeNumerically(">", 0))
	g.Expect(mal.Beside.WithReason).To(Equal(12), "wrong: %v", mal.Beside.Wrong)
	g.Expect(mal.Beside.ByReason).To(HaveLen(6), "every reason of fixture.Malformations")
	g.Expect(mal.Alone.Deployments).To(Equal(12))
	g.Expect(mal.Beside.Deployments).To(Equal(12), "none for a malformed integration")
	g.Expect(mal.Beside.Restarts).To(BeZero())
	g.Expect(stdout).To(ContainSubstring("Malformed: 12 valid integrations for"))
	t.Log("the sweeps: the rollout at N=6 over the 2 operators, and of the 12 integrations over a set of 1")
	g.Expect(stderr).To(ContainSubstring("sweep: 2 rollouts after the scenarios; expect about 1m0s"))
	g.Expect(res.SweepIntegrations).To(ConsistOf(And(HaveField("Integrations", 6), HaveField("Operators", 2),
		HaveField("Ratio", BeNumerically(">", 0)), HaveField("BareRatio", BeNumerically(">", 0)),
		HaveField("CPUMillisPerIntegration", BeNumerically(">", 0)))))
	g.Expect(res.SweepOperators).To(ConsistOf(And(HaveField("Integrations", 12), HaveField("Operators", 1),
		HaveField("Ratio", BeNumerically(">", 0)), HaveField("RSSMiBPerOperator", BeNumerically(">", 0)),
		HaveField("IdleOwnMiBPerOperator", BeNumerically(">", 0)), HaveField("WatchEventsPerIntegration", BeNumerically(">", 0)))))
	g.Expect(stdout).To(ContainSubstring("Sweep over M: the rollout of 12 integrations"))
	for _, f := range []string{"rollout.png", "handoff.png", "apiserver-floor.pprof", "apiserver-bare.pprof", "apiserver-caravan.pprof",
		"sweep-integrations-ratio.png", "sweep-operators-heap.png"} {
		g.Expect(filepath.Join(out, f)).To(BeAnExistingFile())
	}

	m := clusterDir.FindStringSubmatch(stdout + stderr)
	g.Expect(m).NotTo(BeNil(), "the bench says where its cluster is")
	g.Expect(m[1]).NotTo(BeADirectory(), "the bench removed its cluster")
}

func TestAnInterruptedBenchStopsItsClusterAndOperators(t *testing.T) {
	g := NewWithT(t)
	cmd := exec.Command(env.Caravan, "bench", "--scenarios", "rollout", "-N", "200", "--operators", "2",
		"--out", t.TempDir(), "--timeout", "10m")
	progress, err := cmd.StderrPipe()
	g.Expect(err).NotTo(HaveOccurred())
	cmd.Stdout = io.Discard
	g.Expect(cmd.Start()).To(Succeed())
	defer func() { _ = cmd.Process.Kill() }()

	// Read the progress until the rollout is under way, noting where the
	// cluster is.
	var dir string
	lines := bufio.NewScanner(progress)
	for lines.Scan() {
		line := lines.Text()
		if m := clusterDir.FindStringSubmatch(line); m != nil {
			dir = m[1]
		}
		if strings.HasPrefix(line, "rollout: floor,") {
			break
		}
	}
	g.Expect(dir).NotTo(BeEmpty(), "the bench never said where its cluster is")
	pids := processesMentioning(dir)
	// etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok
	// and the process node.
	g.Expect(len(pids)).To(BeNumerically(">=", 6), "the bench's processes: %v", pids)
	operators := harness.PodProcesses("bench-system", "")
	g.Expect(operators).NotTo(BeEmpty(), "no process of the bench's operator pods")
	pids = append(pids, operators...)

	g.Expect(cmd.Process.Signal(syscall.SIGINT)).To(Succeed())
	go func() { _, _ = io.Copy(io.Discard, progress) }()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		g.Expect(err).To(HaveOccurred(), "an interrupted bench reports that it did not finish")
	case <-time.After(2 * time.Minute):
		t.Fatal("the bench did not stop within 2 minutes of an interrupt")
	}
	g.Expect(dir).NotTo(BeADirectory(), "the bench removed its cluster")
	for _, pid := range pids {
		g.Eventually(func() bool { return running(pid) }, 10*time.Second, 100*time.Millisecond).Should(BeFalse(),
			"process %d of the bench's cluster still runs", pid)
	}
}
