package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"

	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/metrics"
	"github.com/caravan-dev/caravan/internal/operatorimage"
	"github.com/caravan-dev/caravan/internal/operatorpod"
	"github.com/caravan-dev/caravan/internal/version"
)

// operatorGroup is the group of the bare operator's identity; it is bound
// to the operator ClusterRole.
const operatorGroup = "caravan:operators"

// operatorUserPrefix begins the user names of the bench's installed
// operators: the ServiceAccounts of the operator namespace.
const operatorUserPrefix = "system:serviceaccount:" + operatorNamespace + ":"

// Operator is one operator the bench installed, as `caravan install`
// does: a Deployment in operatorNamespace whose pod runs the operator
// image on the process node, as its ServiceAccount <id>-operator.
type Operator struct {
	ID   string
	User string
	// Pod runs the operator; MetricsURL, ReadyzURL and PprofURL are its
	// endpoints.
	Pod        string
	MetricsURL string
	ReadyzURL  string
	// PprofURL serves the Go runtime's /debug/pprof.
	PprofURL string

	env *env
	// process runs the operator when it runs on this machine rather than in a pod (see
	// startHostOperator); processLog is the file of its output; processDone closes once it
	// has ended.
	process     *exec.Cmd
	processLog  string
	processDone chan struct{}

	mu    sync.Mutex
	peaks measure.Peaks
}

// operatorImage builds the operator image of the source tree the bench
// runs in, for this machine, and pushes it to the cluster's registry once.
func (e *env) operatorImage(ctx context.Context) (string, error) {
	if e.image != "" {
		return e.image, nil
	}
	cacheDir, err := localcluster.DefaultCacheDir()
	if err != nil {
		return "", err
	}
	fmt.Fprintln(e.progress, "building the operator image of this source tree")
	ref, err := operatorimage.PushLocal(ctx, ".", version.Get(), e.cluster.RegistryAddress, cacheDir, e.progress)
	if err != nil {
		return "", fmt.Errorf("the bench runs operators from the image of Caravan's source tree: %w", err)
	}
	e.image = ref
	return e.image, nil
}

// startOperator installs operator id in operatorNamespace, with the
// objects of `caravan install` but the admission policies (see
// installAdmission) and the Kamelet catalog, and /debug/pprof served.
// Its pod starts in the background: see waitReady. It requests less CPU
// than install's default, so that MaxOperators fit on the process node of
// a two-core machine (its capacity is the machine's); the limit is
// install's.
func (e *env) startOperator(ctx context.Context, id string, configure func(*install.Config)) (*Operator, error) {
	img, err := e.operatorImage(ctx)
	if err != nil {
		return nil, err
	}
	cfg := install.Config{ID: id, Namespace: operatorNamespace, Image: img,
		Version: version.Get(), SkipAdmission: true, SkipKamelets: true, Pprof: true, Resources: benchResources()}
	if configure != nil {
		configure(&cfg)
	}
	objs, err := install.Manifests(cfg)
	if err != nil {
		return nil, err
	}
	if err := (&install.Installer{Client: e.client, Out: io.Discard}).Install(ctx, operatorNamespace, objs); err != nil {
		return nil, fmt.Errorf("installing operator %s: %w", id, err)
	}
	op := &Operator{ID: id, User: operatorUserPrefix + id + "-operator", env: e}
	e.operators = append(e.operators, op)
	return op, nil
}

// benchResources are install's requests and limits, with a CPU request of
// 20m.
func benchResources() corev1.ResourceRequirements {
	r := install.DefaultResources()
	r.Requests[corev1.ResourceCPU] = resource.MustParse("20m")
	return r
}

// waitReady waits until the operator's pod runs and its /readyz answers
// 200, and points the operator's endpoints at it.
func (o *Operator) waitReady(ctx context.Context, timeout time.Duration) error {
	if o.process != nil {
		return o.waitHostReady(ctx, timeout)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		if pods, err := operatorpod.List(ctx, o.env.client, operatorNamespace, o.ID); err == nil {
			if p, ok := operatorpod.Newest(pods); ok {
				// The memory sampler reads the endpoints meanwhile.
				o.mu.Lock()
				o.Pod = p.Name
				o.MetricsURL = operatorpod.MetricsURL(p.Status.PodIP)
				o.ReadyzURL = operatorpod.ProbeURL(p.Status.PodIP, "/readyz")
				o.PprofURL = operatorpod.PprofURL(p.Status.PodIP)
				o.mu.Unlock()
			}
		}
		if o.ReadyzURL != "" && httpOK(ctx, o.ReadyzURL) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("operator %s not ready after %s (pod %q):\n%s", o.ID, timeout, o.Pod, o.logTail(20))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// logTail is the end of the operator pod's log, as `kubectl logs` gives it.
func (o *Operator) logTail(n int64) string {
	if o.process != nil {
		return o.processLogTail(int(n))
	}
	if o.Pod == "" {
		return "(no pod ran)"
	}
	cs, err := kubernetes.NewForConfig(o.env.config)
	if err != nil {
		return err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return operatorpod.Log(ctx, cs, operatorNamespace, o.Pod, n)
}

// stop scales the operator to 0 and waits, for a grace period, until its
// pod is gone. It needs no context: it also runs after the bench was
// interrupted.
func (o *Operator) stop() {
	if o.process != nil {
		o.stopProcess()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = operatorpod.Stop(ctx, o.env.client, operatorNamespace, o.ID)
}

// containerStatuses are the statuses of the containers of the operator's
// pods.
func (o *Operator) containerStatuses(ctx context.Context) ([]corev1.ContainerStatus, error) {
	if o.process != nil {
		return nil, nil // a process has no container, and the bench never restarts it
	}
	pods, err := operatorpod.List(ctx, o.env.client, operatorNamespace, o.ID)
	if err != nil {
		return nil, err
	}
	var out []corev1.ContainerStatus
	for _, p := range pods {
		out = append(out, p.Status.ContainerStatuses...)
	}
	return out, nil
}

// Scrape reads the operator's metrics.
func (o *Operator) Scrape(ctx context.Context) (metrics.Samples, error) {
	return o.scrape(ctx, "")
}

// scrape reads the operator's metrics, those named in query alone when
// it is not empty (the name[] filter of the metrics handler).
func (o *Operator) scrape(ctx context.Context, query string) (metrics.Samples, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	o.mu.Lock()
	url := o.MetricsURL
	o.mu.Unlock()
	if query != "" {
		url += "?" + query
	}
	data, err := o.env.scraper.Get(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("scraping operator %s: %w", o.ID, err)
	}
	return metrics.ParseText(bytes.NewReader(data))
}

// sampleMemory scrapes the operator's memory gauges alone every interval
// until ctx ends, keeping the peak heap, RSS and own memory since the last
// resetPeaks. (The whole of its metrics, every second, was a fifth of what
// ten operators cost more than one.)
func (o *Operator) sampleMemory(ctx context.Context, interval time.Duration) {
	for {
		if s, err := o.scrape(ctx, measure.MemoryQuery); err == nil {
			o.mu.Lock()
			o.peaks = o.peaks.WithSample(s)
			o.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

func (o *Operator) resetPeaks() {
	o.mu.Lock()
	o.peaks = measure.Peaks{}
	o.mu.Unlock()
}

func (o *Operator) peaksSampled() measure.Peaks {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.peaks
}

// steadyHeap is the operator's live heap once it is idle. It waits for a
// garbage collection that starts after the call (the runtime forces one
// at least every two minutes) and returns the heap that collection kept,
// read from the next heap goal: live = next_gc / (1 + GOGC/100).
func (o *Operator) steadyHeap(ctx context.Context, maxWait time.Duration) (float64, error) {
	first, err := o.Scrape(ctx)
	if err != nil {
		return 0, err
	}
	gcs := first.Sum("go_gc_duration_seconds_count")
	deadline := time.Now().Add(maxWait)
	for {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Second):
		}
		s, err := o.Scrape(ctx)
		if err != nil {
			return 0, err
		}
		if s.Sum("go_gc_duration_seconds_count") > gcs || time.Now().After(deadline) {
			return measure.LiveHeap(s), nil
		}
	}
}

// scrapeAll reads the counters of every operator.
func scrapeAll(ctx context.Context, ops []*Operator) ([]measure.Counters, error) {
	out := make([]measure.Counters, len(ops))
	for i, op := range ops {
		s, err := op.Scrape(ctx)
		if err != nil {
			return nil, err
		}
		out[i] = measure.CountersOf(s)
	}
	return out, nil
}

// memorySamplesPerSecond is how many memory samples the bench takes a
// second over all the operators of a set. Each costs the operator that
// serves it a few milliseconds of CPU, so a fixed total keeps what the
// observer costs the same whatever the number of operators.
const memorySamplesPerSecond = 3

// sampleInterval is how often each of n operators has its memory sampled:
// every second, or less often when there are more than
// memorySamplesPerSecond of them.
func sampleInterval(n int) time.Duration {
	return max(time.Second, time.Duration(n)*time.Second/memorySamplesPerSecond)
}

// sampleOperators samples the memory of every operator of ops, each every
// sampleInterval, until ctx ends.
func sampleOperators(ctx context.Context, ops []*Operator) {
	every := sampleInterval(len(ops))
	for _, op := range ops {
		go op.sampleMemory(ctx, every)
	}
}
