// Package bench measures Caravan against the floor on its own local
// cluster. It measures a rollout of N integrations over M operators next
// to N bare Deployments with the same pod template, each operator's
// memory against its share, hand-offs between operators, and kit builds
// against a real registry. Every figure is a ratio or a count measured
// side by side in the same run, because absolute times drift on shared
// machines. It prints tables and writes bench.json and one PNG per
// scenario.
//
// This package brings up the cluster and the operators and runs the
// scenarios. Its sub-packages do the rest: measure takes the figures,
// result holds them as bench.json has them, report prints the tables and
// writes the files, and bareoperator is the least an operator can do,
// which the rollout runs next to Caravan's operators.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/bench/report"
	"github.com/caravan-dev/caravan/internal/bench/result"
	"github.com/caravan-dev/caravan/internal/install"
)

// Scenario names.
const (
	Rollout = "rollout"
	Share   = "share"
	Handoff = "handoff"
	Build   = "build"
	// Admission measures the admission policies' cost against the
	// number of operators.
	Admission = "admission"
	// Recovery measures an operator's recovery from a kill during a
	// burst.
	Recovery = "recovery"
	// Malformed measures what bad input costs the valid input beside it.
	Malformed = "malformed"
	// Runtime measures integrations as real JVMs against the same route started directly.
	Runtime = "runtime"
	// Nodes measures the process node and the kubelet node side by side, each on a cluster of
	// its own, before the others start theirs.
	Nodes = "nodes"
)

// Scenarios are the known scenarios, in the order they run.
var Scenarios = []string{Nodes, Rollout, Share, Handoff, Build, Runtime, Admission, Recovery, Malformed}

// Options say what to measure.
type Options struct {
	// Binary is the caravan executable whose `operator` command runs the
	// operators.
	Binary    string
	Scenarios []string
	// Integrations is how many integrations the rollout runs (N), over
	// Operators operators (M). RolloutRuns is how many times the rollout
	// runs (floor and Caravan each time).
	Integrations int
	Operators    int
	RolloutRuns  int
	// ShareIntegrations is how many integrations the share scenario splits
	// between two operators, by ShareSplit (percent each).
	ShareIntegrations int
	ShareSplit        [2]int
	// HandoffIntegrations is how many integrations, of HandoffReplicas pods
	// each, the hand-off moves at once.
	HandoffIntegrations int
	HandoffReplicas     int32
	// BuildIntegrations is how many integrations, over BuildDependencySets
	// dependency sets, the build scenario builds on one operator.
	BuildIntegrations   int
	BuildDependencySets int
	// RuntimeIntegrations is how many integrations the runtime scenario starts on a kit that
	// exists, one at a time, and how many times it starts the floor.
	RuntimeIntegrations int
	// RuntimeMoves is how many running integrations the runtime scenario moves between
	// operators in its canaries: those it started, and more on the existing kit up to that count.
	RuntimeMoves int
	// AdmissionCreates is how many Integrations the admission scenario
	// creates at each of AdmissionOperators registered operators.
	AdmissionCreates   int
	AdmissionOperators []int
	// SkipAdmission runs the operators without the admission policies
	// that `caravan install` installs: they mirror the operator-id label
	// themselves, and every operator watches the whole cluster.
	SkipAdmission bool
	// RolloutFlows gives the rollout's integrations flows, a ConfigMap
	// each, instead of running a pre-built image alone.
	RolloutFlows bool
	// ProfileOperators takes every operator's CPU profile over the
	// rollout's Caravan phase. Off by default: an operator pays for each
	// profile it serves (the runtime builds and compresses it once the
	// profiling stops, unseen by the profile), so the operators' CPU
	// figures would grow with their number by the observer's share.
	ProfileOperators bool
	// SweepIntegrations runs the rollout at each of these N, over
	// Operators operators; SweepOperators at each of these M, with
	// Integrations integrations. Either sweep runs after the scenarios.
	SweepIntegrations []int
	SweepOperators    []int
	// SweepCPULimits runs the rollout with Integrations integrations over
	// Operators operators whose CPU limit is each of these (the operator
	// runs as many Go processors as its limit, rounded up).
	SweepCPULimits []string
	// SweepHostProcesses runs the rollout with Integrations integrations over Operators
	// operators as pods of the process node, then as processes of this machine.
	SweepHostProcesses bool
	// Out receives bench.json and the PNGs.
	Out string
	// Progress receives progress lines; Report the tables.
	Progress io.Writer
	Report   io.Writer
}

// sweeps is how many rollout points the sweeps of o run.
func (o *Options) sweeps() int {
	n := len(o.SweepIntegrations) + len(o.SweepOperators) + len(o.SweepCPULimits)
	if o.SweepHostProcesses {
		n += len(runAs)
	}
	return n
}

// maxAdmissionOperators is the most registrations the admission scenario
// makes (no operator runs for them).
const maxAdmissionOperators = 500

// MaxOperators is the most operators a run starts: each is a process of
// about 30 to 70 MiB, on the machine that runs the bench.
const MaxOperators = 50

// Validate checks the options.
func (o *Options) Validate() error {
	for _, s := range o.Scenarios {
		if !slices.Contains(Scenarios, s) {
			return fmt.Errorf("unknown scenario %q (known: %v)", s, Scenarios)
		}
	}
	for _, l := range o.SweepCPULimits {
		if q, err := resource.ParseQuantity(l); err != nil || q.Sign() <= 0 {
			return fmt.Errorf("--sweep-cpu-limits: %q is no positive CPU quantity", l)
		}
	}
	if len(o.Scenarios) == 0 && o.sweeps() == 0 {
		return errors.New("no scenario and no sweep to run")
	}
	if o.Integrations < 1 || o.Operators < 1 || o.Operators > MaxOperators {
		return fmt.Errorf("need at least 1 integration and 1 to %d operators, got %d and %d", MaxOperators, o.Integrations, o.Operators)
	}
	for _, n := range o.SweepIntegrations {
		if n < 1 {
			return fmt.Errorf("--sweep-integrations: need at least 1 integration, got %d", n)
		}
	}
	for _, m := range o.SweepOperators {
		if m < 1 || m > MaxOperators {
			return fmt.Errorf("--sweep-operators: need 1 to %d operators, got %d", MaxOperators, m)
		}
	}
	if o.RolloutRuns < 1 || o.RolloutRuns > 9 {
		return fmt.Errorf("the rollout runs 1 to 9 times, got %d", o.RolloutRuns)
	}
	if o.ShareSplit[0] <= 0 || o.ShareSplit[1] <= 0 || o.ShareSplit[0]+o.ShareSplit[1] != 100 {
		return fmt.Errorf("the share split must be two positive percentages adding up to 100, got %v", o.ShareSplit)
	}
	if o.ShareIntegrations < 10 || o.HandoffIntegrations < 1 || o.HandoffReplicas < 1 ||
		o.BuildIntegrations < 1 || o.BuildDependencySets < 1 {
		return errors.New("the share scenario needs at least 10 integrations, and the hand-off and build scenarios at least 1 integration, replica and dependency set")
	}
	if slices.Contains(o.Scenarios, Admission) {
		if o.AdmissionCreates < 1 || len(o.AdmissionOperators) == 0 {
			return errors.New("the admission scenario needs at least 1 create and 1 count of operators")
		}
		for _, m := range o.AdmissionOperators {
			if m < 1 || m > maxAdmissionOperators {
				return fmt.Errorf("--admission-operators: need 1 to %d operators, got %d", maxAdmissionOperators, m)
			}
		}
	}
	if slices.Contains(o.Scenarios, Handoff) && o.Operators < 2 {
		return errors.New("the handoff scenario needs at least 2 operators (it moves integrations from one to another)")
	}
	if (slices.Contains(o.Scenarios, Runtime) || slices.Contains(o.Scenarios, Nodes)) && o.RuntimeIntegrations < 1 {
		return errors.New("the runtime and nodes scenarios need at least 1 integration (--runtime-integrations)")
	}
	if slices.Contains(o.Scenarios, Runtime) && o.RuntimeMoves < len(runtimeWaves) {
		return fmt.Errorf("the runtime scenario moves at least %d integrations, one per wave of its canaries", len(runtimeWaves))
	}
	if o.BuildDependencySets > len(BuildComponents) {
		return fmt.Errorf("the build scenario has %d dependency sets at most (one per component of %v), got %d",
			len(BuildComponents), BuildComponents, o.BuildDependencySets)
	}
	return nil
}

// Run brings up a local cluster, runs the scenarios, prints the tables
// and writes the figures. The nodes scenario runs first, on clusters of
// its own. The clusters and every process they started are gone when Run
// returns, also when ctx is cancelled. A scenario that fails is reported
// and the next one runs.
func Run(ctx context.Context, o Options) (*result.Results, error) {
	res := &result.Results{Machine: machine(), Started: time.Now(), Failures: map[string]string{},
		Options: result.Options{Scenarios: o.Scenarios, Integrations: o.Integrations, Operators: o.Operators, RolloutRuns: o.RolloutRuns,
			Share: o.ShareSplit, ShareN: o.ShareIntegrations, SkipAdmission: o.SkipAdmission,
			RolloutFlows: o.RolloutFlows, ProfileOperators: o.ProfileOperators, SweepIntegrations: o.SweepIntegrations, SweepOperators: o.SweepOperators, SweepCPULimits: o.SweepCPULimits,
			SweepHostProcesses: o.SweepHostProcesses}}
	if points := o.sweeps(); points > 0 {
		fmt.Fprintf(o.Progress, "sweep: %d rollouts after the scenarios; expect about %s on a two-core machine\n",
			points, SweepEstimate(o))
	}
	// The bench's own watches log nothing worth reading.
	ctrl.SetLogger(textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(io.Discard))))
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	if slices.Contains(o.Scenarios, Nodes) {
		var err error
		if res.Nodes, err = runNodes(ctx, o); err != nil {
			if ctx.Err() != nil {
				return res, err
			}
			fmt.Fprintf(o.Progress, "%s: failed: %v\n", Nodes, err)
			res.Failures[Nodes] = err.Error()
		}
	}
	if err := runOnSharedCluster(ctx, o, res); err != nil {
		return res, err
	}
	res.Seconds = measure.Round3(time.Since(res.Started).Seconds())
	report.WriteTables(o.Report, res)
	if err := report.WriteFiles(o.Out, res); err != nil {
		return res, err
	}
	if len(res.Failures) > 0 {
		return res, fmt.Errorf("%d scenario(s) failed; see above", len(res.Failures))
	}
	return res, nil
}

// runOnSharedCluster runs the scenarios and sweeps that share one local cluster, if any was asked
// for, reporting each failure in res. The cluster is gone when it returns.
func runOnSharedCluster(ctx context.Context, o Options, res *result.Results) error {
	if !slices.ContainsFunc(o.Scenarios, func(s string) bool { return s != Nodes }) && o.sweeps() == 0 {
		return nil
	}
	e, err := startEnv(ctx, o.Binary, o.Progress)
	if err != nil {
		return err
	}
	e.skipAdmission, e.rolloutFlows, e.profileOperators = o.SkipAdmission, o.RolloutFlows, o.ProfileOperators
	defer func() {
		fmt.Fprintln(o.Progress, "stopping the operators and the local cluster")
		if err := e.stop(); err != nil {
			fmt.Fprintln(o.Progress, "stopping:", err)
		}
	}()
	for _, s := range Scenarios {
		if s == Nodes || !slices.Contains(o.Scenarios, s) {
			continue
		}
		if err := runScenario(ctx, e, o, s, res); err != nil {
			if ctx.Err() != nil {
				return err
			}
			fmt.Fprintf(o.Progress, "%s: failed: %v (the logs are in %s)\n", s, err, e.dir)
			res.Failures[s] = err.Error()
		}
	}
	if o.sweeps() > 0 {
		if err := runSweeps(ctx, e, o, res); err != nil {
			if ctx.Err() != nil {
				return err
			}
			fmt.Fprintf(o.Progress, "sweep: failed: %v (the logs are in %s)\n", err, e.dir)
			res.Failures["sweep"] = err.Error()
		}
	}
	return nil
}

func runScenario(ctx context.Context, e *env, o Options, s string, res *result.Results) error {
	var (
		ops []*Operator
		err error
	)
	if s != Share && s != Admission && s != Build && s != Runtime { // they start operators of their own, or none
		if ops, err = e.operatorSet(ctx, "bench", o.Operators); err != nil {
			return err
		}
	}
	switch s {
	case Rollout:
		res.Rollout, err = runRollouts(ctx, e, ops, o.Integrations, o.RolloutRuns)
	case Share:
		res.Share, err = runShare(ctx, e, o.ShareIntegrations, o.ShareSplit)
	case Handoff:
		res.Handoff, err = runHandoff(ctx, e, ops[0], ops[1], o.HandoffIntegrations, o.HandoffReplicas)
	case Build:
		res.Build, err = runBuild(ctx, e, o.BuildIntegrations, o.BuildDependencySets)
	case Runtime:
		res.Runtime, err = runRuntime(ctx, e, o.RuntimeIntegrations, o.RuntimeMoves)
	case Admission:
		res.Admission, err = runAdmission(ctx, e, o.AdmissionCreates, o.AdmissionOperators)
	case Recovery:
		res.Recovery, err = runRecovery(ctx, e, ops[0], o.Integrations)
	case Malformed:
		res.Malformed, err = runMalformed(ctx, e, ops[0], o.Integrations)
	}
	return err
}

// operatorSet returns the operators of the set name, started (and
// sampled) on first use: name-0 … name-<n-1>.
func (e *env) operatorSet(ctx context.Context, name string, n int) ([]*Operator, error) {
	return e.operatorSetWith(ctx, name, n, nil)
}

// operatorSetWith is operatorSet, configure changing what is installed (nil for nothing).
func (e *env) operatorSetWith(ctx context.Context, name string, n int, configure func(*install.Config)) ([]*Operator, error) {
	if ops, ok := e.sets[name]; ok {
		return ops, nil
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", name, i)
	}
	fmt.Fprintf(e.progress, "starting %d operators\n", n)
	ops, err := e.startOperators(ctx, configure, ids...)
	if err != nil {
		return nil, err
	}
	sampleOperators(ctx, ops)
	if e.sets == nil {
		e.sets = map[string][]*Operator{}
	}
	e.sets[name] = ops
	return ops, nil
}

// machine describes this machine.
func machine() result.Machine {
	m := result.Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.CPUModel = field(string(data), "model name")
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int
		if _, err := fmt.Sscanf(field(string(data), "MemTotal"), "%d", &kb); err == nil {
			m.MemoryGiB = (kb + 512*1024) / (1024 * 1024)
		}
	}
	return m
}

// field returns the value of the first "key: value" line of text.
func field(text, key string) string {
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
