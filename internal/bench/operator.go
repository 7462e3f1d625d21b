package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/caravan-dev/caravan/internal/localcluster"
)

// operatorGroup is the group of every operator identity the bench mints;
// it is bound to the operator ClusterRole.
const operatorGroup = "caravan:operators"

// Operator is one `caravan operator` process started by the bench, with
// its own client certificate (user caravan:operator:<id>).
type Operator struct {
	ID         string
	User       string
	MetricsURL string
	ReadyzURL  string
	// PprofURL serves the Go runtime's /debug/pprof.
	PprofURL string
	Log      string

	cmd    *exec.Cmd
	exited chan struct{}

	mu       sync.Mutex
	peakHeap float64
	peakRSS  float64
}

// startOperator runs the current binary's operator command for id in
// namespace. The process dies with the bench (Pdeathsig) and is stopped
// by stop.
func (e *env) startOperator(id string) (*Operator, error) {
	user := operatorUserPrefix + id
	kubeconfig := filepath.Join(e.dir, "operators", id+".kubeconfig")
	if err := os.MkdirAll(filepath.Dir(kubeconfig), 0o700); err != nil {
		return nil, err
	}
	if err := e.cluster.WriteKubeconfig(kubeconfig, user, operatorGroup); err != nil {
		return nil, err
	}
	metrics, err := localcluster.FreePort()
	if err != nil {
		return nil, err
	}
	probes, err := localcluster.FreePort()
	if err != nil {
		return nil, err
	}
	pprof, err := localcluster.FreePort()
	if err != nil {
		return nil, err
	}
	op := &Operator{
		ID: id, User: user,
		MetricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metrics),
		ReadyzURL:  fmt.Sprintf("http://127.0.0.1:%d/readyz", probes),
		PprofURL:   fmt.Sprintf("http://127.0.0.1:%d", pprof),
		Log:        filepath.Join(e.dir, "operators", id+".log"),
		exited:     make(chan struct{}),
	}
	logFile, err := os.Create(op.Log)
	if err != nil {
		return nil, err
	}
	op.cmd = exec.Command(e.binary, "operator", "--kubeconfig", kubeconfig, "-n", operatorNamespace,
		"--operator-id", id,
		"--metrics-bind-address", "127.0.0.1:"+strconv.Itoa(metrics),
		"--health-probe-bind-address", "127.0.0.1:"+strconv.Itoa(probes),
		"--pprof-bind-address", "127.0.0.1:"+strconv.Itoa(pprof))
	op.cmd.Stdout, op.cmd.Stderr = logFile, logFile
	op.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := op.cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting operator %s: %w", id, err)
	}
	go func() { _ = op.cmd.Wait(); _ = logFile.Close(); close(op.exited) }()
	e.operators = append(e.operators, op)
	return op, nil
}

// waitReady waits until the operator's /readyz answers 200.
func (o *Operator) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		select {
		case <-o.exited:
			return fmt.Errorf("operator %s exited; see %s:\n%s", o.ID, o.Log, tail(o.Log, 20))
		default:
		}
		if httpOK(ctx, o.ReadyzURL) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("operator %s not ready after %s; see %s:\n%s", o.ID, timeout, o.Log, tail(o.Log, 20))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM, then SIGKILL after a grace period.
func (o *Operator) stop() {
	select {
	case <-o.exited:
		return
	default:
	}
	_ = o.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-o.exited:
	case <-time.After(15 * time.Second):
		_ = o.cmd.Process.Kill()
		<-o.exited
	}
}

// Scrape reads the operator's metrics.
func (o *Operator) Scrape(ctx context.Context) (Samples, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	data, err := httpGet(ctx, o.MetricsURL)
	if err != nil {
		return nil, fmt.Errorf("scraping operator %s: %w", o.ID, err)
	}
	return ParseMetrics(bytes.NewReader(data))
}

// sampleMemory scrapes the operator every interval until ctx ends,
// keeping the peak heap and RSS since the last resetPeaks.
func (o *Operator) sampleMemory(ctx context.Context, interval time.Duration) {
	for {
		if s, err := o.Scrape(ctx); err == nil {
			o.mu.Lock()
			o.peakHeap = max(o.peakHeap, s.Sum("go_memstats_heap_alloc_bytes"))
			o.peakRSS = max(o.peakRSS, s.Sum("process_resident_memory_bytes"))
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
	o.peakHeap, o.peakRSS = 0, 0
	o.mu.Unlock()
}

func (o *Operator) peaks() (heap, rss float64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.peakHeap, o.peakRSS
}

// steadyHeap is the operator's live heap once it is idle: it waits for a
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
			return liveHeap(s), nil
		}
	}
}

// liveHeap is the heap kept by the last garbage collection.
func liveHeap(s Samples) float64 {
	gogc := 100.0
	for _, x := range s {
		if x.Name == "go_gc_gogc_percent" {
			gogc = x.Value
		}
	}
	return s.Sum("go_memstats_next_gc_bytes") / (1 + gogc/100)
}
