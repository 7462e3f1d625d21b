package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/bench/result"
	"github.com/caravan-dev/caravan/internal/image"
	kitpkg "github.com/caravan-dev/caravan/internal/kit"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/procnode"
	"github.com/caravan-dev/caravan/internal/runtime"
	"github.com/caravan-dev/caravan/internal/trait"
)

// runtimeNamespace holds the runtime scenario's integrations, whose pods run as real JVMs.
const runtimeNamespace = "bench-runtime"

// tickMark begins the line the runtime scenario's route logs every second, with the timer's
// counter after it.
const tickMark = "bench-tick "

// tickRoute is the route of the runtime scenario: a timer that logs its counter every second.
// Camel 4's timer gives the counter as a header, with its metadata included.
var tickRoute = "- from:\n    uri: timer:tick?period=1000&includeMetadata=true\n    steps:\n    - log: \"" + tickMark + "${header.CamelTimerCounter}\"\n"

// Runtime scenario's dependency sets: a kit of one component, then one more on it.
var (
	runtimeDeps     = []string{"camel:jackson"}
	runtimeMoreDeps = []string{"camel:jackson", "camel:http"}
)

// runtimeIdle is how long an integration idles before its memory is read.
const runtimeIdle = 30 * time.Second

// runtimeTimeout bounds the wait for one integration's first message: its kit's build included.
const runtimeTimeout = 8 * time.Minute

// runRuntime measures integrations as real JVMs on the process node, side by side with the
// floor: the same route on the same jars and Java, started directly on this machine. It times
// the first message after the apply for a kit built with an empty Maven cache, for one that
// adds a dependency to it with the cache warm, and for n integrations on the kit that exists;
// then the memory and CPU of an idle integration against the floor's JVM.
func runRuntime(ctx context.Context, e *env, n, moves int) (*result.Runtime, error) {
	ops, err := e.startMavenOperators(ctx, "runtime-a")
	if err != nil {
		return nil, err
	}
	if err := e.createNamespace(ctx, runtimeNamespace); err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(e.config)
	if err != nil {
		return nil, err
	}
	res := &result.Runtime{Integrations: n}
	s := &tickStarter{e: e, cs: cs, op: ops[0]}
	if err := s.startTimes(ctx, n, res); err != nil {
		return nil, err
	}

	fmt.Fprintln(e.progress, "runtime: the floor, the same route on the same jars and Java, started directly")
	floor, err := prepareFloor(ctx, e, cs, "existing-0")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(floor.dir)
	if err := floorFigures(ctx, e, cs, floor, n, res); err != nil {
		return nil, err
	}
	if res.Quarkus, err = quarkusFigures(ctx, e, cs, ops[0], n); err != nil {
		return nil, err
	}

	if err := s.moveTimes(ctx, moveNames(n, moves), n, res); err != nil {
		return nil, err
	}
	return res, e.deleteNamespace(ctx, runtimeNamespace)
}

// tickStarter creates tick integrations for one operator and times their first message.
type tickStarter struct {
	e  *env
	cs kubernetes.Interface
	op *Operator
	// provider is the camel trait's runtimeProvider of the integrations, "" for the platform's;
	// prefix begins their names.
	provider, prefix string
}

// first creates the tick integration name on a kit of deps and returns the seconds to its
// first message.
func (s *tickStarter) first(ctx context.Context, name string, deps []string) (float64, error) {
	name = s.prefix + name
	it := tickIntegration(name, s.op.ID, deps)
	if s.provider != "" {
		it.Spec.Traits = camelv1.Traits{"camel": {JSON: apiextensionsv1.JSON{Raw: []byte(`{"runtimeProvider":"` + s.provider + `"}`)}}}
	}
	start := time.Now()
	if err := s.e.client.Create(ctx, it); err != nil {
		return 0, err
	}
	at, err := firstTick(ctx, s.e.client, s.cs, runtimeNamespace, name, start)
	if err != nil {
		return 0, fmt.Errorf("integration %s: %w", name, err)
	}
	return measure.Round3(at.Sub(start).Seconds()), nil
}

// startTimes times the first message of the cold and warm kits' integrations, then of n
// integrations on the kit that exists, one at a time.
func (s *tickStarter) startTimes(ctx context.Context, n int, res *result.Runtime) error {
	var err error
	res.ColdSeconds, res.WarmSeconds, res.ExistingSeconds, err = s.times(ctx, n, "an empty Maven cache")
	return err
}

// times times the first message of the cold and warm kits' integrations, then of n
// integrations on the kit that exists, one at a time; cache says how cold the first is.
func (s *tickStarter) times(ctx context.Context, n int, cache string) (cold, warm float64, existing measure.Distribution, err error) {
	progress := s.e.progress
	fmt.Fprintf(progress, "runtime: %sa kit of camel:jackson with %s, to the first message\n", s.prefix, cache)
	if cold, err = s.first(ctx, "cold", runtimeDeps); err != nil {
		return 0, 0, existing, err
	}
	fmt.Fprintf(progress, "runtime:   %.1f s; one more dependency on that kit, the cache warm\n", cold)
	if warm, err = s.first(ctx, "warm", runtimeMoreDeps); err != nil {
		return 0, 0, existing, err
	}
	fmt.Fprintf(progress, "runtime:   %.1f s; %d integrations on the kit that exists, one at a time\n", warm, n)
	existing, err = s.existing(ctx, n)
	return cold, warm, existing, err
}

// existing times the first message of n integrations on the kit of runtimeDeps, which exists,
// one at a time.
func (s *tickStarter) existing(ctx context.Context, n int) (measure.Distribution, error) {
	var times []float64
	for i := range n {
		secs, err := s.first(ctx, fmt.Sprintf("existing-%d", i), runtimeDeps)
		if err != nil {
			return measure.Distribution{}, err
		}
		times = append(times, secs)
	}
	return measure.Summarize(times), nil
}

// floorFigures times the floor's first message n times, then reads the idle memory and CPU of
// an integration beside the floor's JVM.
func floorFigures(ctx context.Context, e *env, cs kubernetes.Interface, floor *floorRun, n int, res *result.Runtime) error {
	res.Heap = floor.heap
	res.MemoryLimit = floor.limit
	var err error
	if res.FloorSeconds, err = floor.firstTicks(ctx, n); err != nil {
		return err
	}
	res.Ratio = measure.Ratio(res.ExistingSeconds.P50, res.FloorSeconds.P50)

	if err := archivedFloorFigures(ctx, e, cs, floor, n, res); err != nil {
		return err
	}

	fmt.Fprintf(e.progress, "runtime: memory and CPU after %s idle, an integration beside the floor's JVM\n", runtimeIdle)
	if res.Idle, res.FloorIdle, err = idleFigures(ctx, floor, "existing-0"); err != nil {
		return err
	}
	res.RSSRatio = measure.Ratio(res.Idle.RSSMiB, res.FloorIdle.RSSMiB)
	return nil
}

// moveNames names the integrations the runtime scenario moves, moves of them: the cold, warm and
// existing ones, then new moving-i ones to make up the number.
func moveNames(n, moves int) []string {
	names := []string{"cold", "warm"}
	for i := range n {
		names = append(names, fmt.Sprintf("existing-%d", i))
	}
	for i := len(names); i < moves; i++ {
		names = append(names, fmt.Sprintf("moving-%d", i))
	}
	return names[:moves]
}

// moveTimes starts the integrations of names not running yet (all but the first n+2), then
// moves them all to an operator that makes the same kits, and on to one of another base image.
func (s *tickStarter) moveTimes(ctx context.Context, names []string, n int, res *result.Runtime) error {
	e := s.e
	fmt.Fprintf(e.progress, "runtime: %d integrations moved to an operator that makes the same kits, in a canary of %d waves; "+
		"then on to one of another base image, which builds its own\n", len(names), len(runtimeWaves))
	next, err := e.startMavenOperators(ctx, "runtime-b", "runtime-c")
	if err != nil {
		return err
	}
	if err := useOtherBaseImage(ctx, e, next[1]); err != nil {
		return err
	}
	// The starts use the scenario's context: a failed start does not cancel those under way.
	err = parallel(ctx, len(names)-min(len(names), n+2), func(_ context.Context, i int) error {
		_, err := s.first(ctx, names[n+2+i], runtimeDeps)
		return err
	})
	if err != nil {
		return err
	}
	if res.Move, err = moveRuntime(ctx, e, s.cs, s.op, next[0], names); err != nil {
		return err
	}
	fmt.Fprintf(e.progress, "runtime:   move p99 %.2f s, %d pods started, %d ticks lost; on to %s, of another base image\n",
		res.Move.MoveSeconds.P99, res.Move.PodsStarted, res.Move.LostTicks, next[1].ID)
	res.Roll, err = moveRuntime(ctx, e, s.cs, next[0], next[1], names)
	return err
}

// tickIntegration is an integration of the tick route, on a kit of deps, assigned to id.
func tickIntegration(name, id string, deps []string) *camelv1.Integration {
	return &camelv1.Integration{
		ObjectMeta: metav1.ObjectMeta{Namespace: runtimeNamespace, Name: name,
			Annotations: map[string]string{camelv1.OperatorIDAnnotation: id}},
		Spec: camelv1.IntegrationSpec{Sources: []camelv1.SourceSpec{{Name: "tick.yaml", Content: tickRoute}},
			Dependencies: deps},
	}
}

// firstTick waits for the first pod of integration name and returns when it wrote its first
// tick, by the time the node recorded with the line.
func firstTick(ctx context.Context, c client.Client, cs kubernetes.Interface, ns, name string, since time.Time) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, runtimeTimeout)
	defer cancel()
	last := "no pod yet"
	for {
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{camelv1.IntegrationLabel: name}); err == nil {
			for _, p := range pods.Items {
				if p.Status.Phase != corev1.PodRunning {
					last = fmt.Sprintf("pod %s in phase %s", p.Name, p.Status.Phase)
					continue
				}
				data, err := cs.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{Timestamps: true}).DoRaw(ctx)
				if err != nil {
					last = err.Error()
					continue
				}
				if at, ok := tickTime(string(data)); ok && at.After(since) {
					return at, nil
				}
				last = fmt.Sprintf("pod %s has logged no tick yet", p.Name)
			}
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("no message after %s: %s", runtimeTimeout, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// tickTime is the time of the first tick of a log read with timestamps.
func tickTime(log string) (time.Time, bool) {
	for _, line := range strings.Split(log, "\n") {
		stamp, text, ok := strings.Cut(line, " ")
		if !ok || !strings.Contains(text, tickMark) {
			continue
		}
		if at, err := time.Parse(time.RFC3339Nano, stamp); err == nil {
			return at, true
		}
	}
	return time.Time{}, false
}

// floorRun is the route of an integration set up to run without Kubernetes: its kit image
// unpacked, its properties and sources written beside it.
type floorRun struct {
	dir   string
	java  string
	args  []string
	env   []string
	heap  string
	limit string
	// kitArchived tells that the integration's JVM maps its kit's archive, which kitArchive,
	// the kit's condition, describes.
	kitArchived bool
	kitArchive  string
	// out is the end of the output of the JVM started last.
	out *tail
}

// tail keeps the last lines written to it.
type tail struct {
	mu    sync.Mutex
	lines []string
}

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > 30 {
		t.lines = t.lines[1:]
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}

// prepareFloor unpacks the kit image of integration name and writes the files its pod mounts
// under /etc/camel, to run its java command line with the paths moved there.
func prepareFloor(ctx context.Context, e *env, cs kubernetes.Interface, name string) (*floorRun, error) {
	kit, dep, err := kitAndDeployment(ctx, e, name)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "caravan-floor-")
	if err != nil {
		return nil, err
	}
	f := &floorRun{dir: dir}
	javaHome, err := unpackKit(ctx, e, kit.Status.Image, f.root())
	if err != nil {
		return nil, err
	}
	f.java = filepath.Join(f.root(), javaHome, "bin", "java")
	if len(dep.Spec.Template.Spec.Containers) == 0 {
		return nil, fmt.Errorf("the Deployment of integration %s has no container", name)
	}
	// The integration's container comes first; the rest are the traits' sidecars.
	main := &dep.Spec.Template.Spec.Containers[0]
	f.limit = trait.DefaultMemoryLimit.String() + ", Camel K's default: the container sets none"
	if q, ok := main.Resources.Limits[corev1.ResourceMemory]; ok {
		f.limit = q.String()
	}
	if err := f.writeMounts(ctx, cs, main.VolumeMounts, dep.Spec.Template.Spec.Volumes); err != nil {
		return nil, err
	}
	for _, a := range main.Args {
		if strings.HasPrefix(a, "-Xmx") {
			f.heap = a
		}
		// The floor is the JDK alone: the kit's archive is not its.
		if strings.HasPrefix(a, runtime.ArchiveOption) {
			f.kitArchived = true
			continue
		}
		f.args = append(f.args, f.move(a))
	}
	if c := kit.Status.GetCondition(kitpkg.ArchiveCondition); c != nil {
		f.kitArchive = c.Message
	}
	// The node's pod addresses are loopback ones: the floor binds one no pod has.
	f.env = []string{"PATH=/usr/bin:/bin", "JAVA_HOME=" + filepath.Join(f.root(), javaHome), runtime.EnvPodIP + "=127.254.0.1",
		trait.EnvIntegration + "=floor", "HOME=" + dir}
	// The variables that name the pod's files (Quarkus' configuration, say), their paths moved.
	for _, v := range main.Env {
		if v.ValueFrom == nil && strings.HasPrefix(v.Value, "/") {
			f.env = append(f.env, v.Name+"="+f.move(v.Value))
		}
	}
	return f, nil
}

// kitAndDeployment gets the kit and the Deployment of integration name.
func kitAndDeployment(ctx context.Context, e *env, name string) (*camelv1.IntegrationKit, *appsv1.Deployment, error) {
	it := &camelv1.Integration{}
	if err := e.client.Get(ctx, client.ObjectKey{Namespace: runtimeNamespace, Name: name}, it); err != nil {
		return nil, nil, err
	}
	if it.Status.IntegrationKit == nil {
		return nil, nil, fmt.Errorf("integration %s has no kit", name)
	}
	kit := &camelv1.IntegrationKit{}
	if err := e.client.Get(ctx, client.ObjectKey{Namespace: runtimeNamespace, Name: it.Status.IntegrationKit.Name}, kit); err != nil {
		return nil, nil, err
	}
	dep := &appsv1.Deployment{}
	if err := e.client.Get(ctx, client.ObjectKey{Namespace: runtimeNamespace, Name: name}, dep); err != nil {
		return nil, nil, err
	}
	return kit, dep, nil
}

// unpackKit pulls kit image ref from the cluster's registry into root and returns its JAVA_HOME.
func unpackKit(ctx context.Context, e *env, ref, root string) (string, error) {
	img, err := image.Pull(ctx, image.Registry{Address: e.cluster.RegistryAddress, Insecure: true}, ref)
	if err != nil {
		return "", err
	}
	if err := procnode.Unpack(img, root); err != nil {
		return "", fmt.Errorf("unpacking the kit image: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return "", err
	}
	javaHome := ""
	for _, kv := range cfg.Config.Env {
		if v, ok := strings.CutPrefix(kv, "JAVA_HOME="); ok {
			javaHome = v
		}
	}
	if javaHome == "" {
		return "", errors.New("the kit image sets no JAVA_HOME")
	}
	return javaHome, nil
}

// root is where the floor's kit image is unpacked.
func (f *floorRun) root() string { return filepath.Join(f.dir, "rootfs") }

// move moves the paths in p of the files the pod mounts, and of the kit's jars, under f.dir.
func (f *floorRun) move(p string) string {
	p = strings.ReplaceAll(p, "/etc/camel", filepath.Join(f.dir, "etc", "camel"))
	return strings.ReplaceAll(p, runtime.DeploymentsDir, filepath.Join(f.root(), strings.TrimPrefix(runtime.DeploymentsDir, "/")))
}

// writeMounts writes the files the container mounts from ConfigMaps, moved under f.dir.
func (f *floorRun) writeMounts(ctx context.Context, cs kubernetes.Interface, mounts []corev1.VolumeMount, volumes []corev1.Volume) error {
	for _, m := range mounts {
		for _, v := range volumes {
			if v.Name != m.Name || v.ConfigMap == nil {
				continue
			}
			cm, err := cs.CoreV1().ConfigMaps(runtimeNamespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			target := f.move(m.MountPath)
			for key, value := range cm.Data {
				path, ok := mountedPath(v.ConfigMap, m, target, key)
				if !ok {
					continue
				}
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(path, []byte(f.move(value)), 0o644); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// mountedPath is where ConfigMap key lands when volume v is mounted by m at target, if it does.
func mountedPath(v *corev1.ConfigMapVolumeSource, m corev1.VolumeMount, target, key string) (string, bool) {
	// Where the key lands in the volume: its item's path, else its name; a
	// volume that lists items holds those alone.
	rel := key
	if len(v.Items) > 0 {
		rel = ""
	}
	for _, item := range v.Items {
		if item.Key == key {
			rel = item.Path
		}
	}
	if rel == "" {
		return "", false
	}
	if m.SubPath != "" {
		if rel != m.SubPath {
			return "", false
		}
		return target, true
	}
	return filepath.Join(target, rel), true
}

// start starts the floor's JVM; ticked receives the time of its first tick. Its output is
// kept in f.out for an error to quote.
func (f *floorRun) start() (*exec.Cmd, <-chan time.Time, error) {
	cmd := exec.Command(f.java, f.args...)
	cmd.Env, cmd.Dir = f.env, f.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	localcluster.DieWithParent(cmd.SysProcAttr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	cmd.Stderr = cmd.Stdout
	ticked := make(chan time.Time, 1)
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("starting the floor's JVM %s: %w", f.java, err)
	}
	f.out = &tail{}
	go func() {
		sc := bufio.NewScanner(out)
		seen := false
		for sc.Scan() {
			f.out.add(sc.Text())
			if !seen && strings.Contains(sc.Text(), tickMark) {
				ticked <- time.Now()
				seen = true
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	return cmd, ticked, nil
}

// firstTick starts the floor's JVM, waits for its first tick, stops it, and returns the time
// from the start to that tick.
func (f *floorRun) firstTick(ctx context.Context) (float64, error) {
	start := time.Now()
	cmd, ticked, err := f.start()
	if err != nil {
		return 0, err
	}
	defer stopProcess(cmd)
	at, err := f.awaitTick(ctx, ticked)
	if err != nil {
		return 0, err
	}
	return measure.Round3(at.Sub(start).Seconds()), nil
}

// firstTicks times the floor's first message n times, one start after the other.
func (f *floorRun) firstTicks(ctx context.Context, n int) (measure.Distribution, error) {
	var times []float64
	for range n {
		s, err := f.firstTick(ctx)
		if err != nil {
			return measure.Distribution{}, err
		}
		times = append(times, s)
	}
	return measure.Summarize(times), nil
}

// awaitTick waits for the first tick of the floor's JVM started last, for up to 2 minutes.
func (f *floorRun) awaitTick(ctx context.Context, ticked <-chan time.Time) (time.Time, error) {
	select {
	case at := <-ticked:
		return at, nil
	case <-time.After(2 * time.Minute):
		return time.Time{}, fmt.Errorf("the floor's JVM (%s %s) logged no tick in 2 minutes; its output ends:\n%s", f.java, strings.Join(f.args, " "), f.out)
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}

func stopProcess(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// idleFigures starts the floor's JVM beside integration name's, lets both idle, and reads
// their memory and their CPU over a further 10 s.
func idleFigures(ctx context.Context, f *floorRun, name string) (result.Idle, result.Idle, error) {
	cmd, ticked, err := f.start()
	if err != nil {
		return result.Idle{}, result.Idle{}, err
	}
	defer stopProcess(cmd)
	if _, err := f.awaitTick(ctx, ticked); err != nil {
		return result.Idle{}, result.Idle{}, err
	}
	pid, err := integrationJVM(name)
	if err != nil {
		return result.Idle{}, result.Idle{}, err
	}
	sleep(ctx, runtimeIdle)
	pids := []int{pid, cmd.Process.Pid}
	var cpu0 [2]float64
	for i, p := range pids {
		if cpu0[i], err = measure.ProcessCPU(p); err != nil {
			return result.Idle{}, result.Idle{}, err
		}
	}
	const window = 10 * time.Second
	sleep(ctx, window)
	var out [2]result.Idle
	for i, p := range pids {
		cpu, err := measure.ProcessCPU(p)
		if err != nil {
			return result.Idle{}, result.Idle{}, err
		}
		rss, err := residentMiB(p)
		if err != nil {
			return result.Idle{}, result.Idle{}, err
		}
		out[i] = result.Idle{RSSMiB: rss, CPUMillicores: measure.Round3((cpu - cpu0[i]) / window.Seconds() * 1000)}
	}
	return out[0], out[1], nil
}

// integrationJVM finds the process of integration name's JVM on this machine, by the
// variable its pod sets and its runtime's main class on its command line.
func integrationJVM(name string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), runtime.MainClass) && !strings.Contains(string(cmdline), runtime.QuarkusEntryPoint) {
			continue
		}
		environ, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(environ), "\x00") {
			if kv == trait.EnvIntegration+"="+name {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("no JVM of integration %s runs on this machine", name)
}

// residentMiB is the resident memory of process pid.
func residentMiB(pid int) (float64, error) { return statusMiB(pid, "VmRSS") }

// anonymousMiB is the resident memory of process pid that is its own: not pages of files, such
// as its executable's, which the kernel can drop and other processes share.
func anonymousMiB(pid int) (float64, error) { return statusMiB(pid, "RssAnon") }

// statusMiB reads the memory figure key of process pid's status, in MiB.
func statusMiB(pid int, key string) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	var kb float64
	if _, err := fmt.Sscanf(field(string(data), key), "%f kB", &kb); err != nil {
		return 0, fmt.Errorf("reading %s of process %d: %w", key, pid, err)
	}
	return measure.Round3(kb / 1024), nil
}
