package build

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/image"
)

// blockingBuild builds nothing until released, and counts how many run at once.
type blockingBuild struct {
	release chan struct{}
	running atomic.Int32
	peak    atomic.Int32
}

func (b *blockingBuild) run(ctx context.Context, _ Job) (Output, error) {
	n := b.running.Add(1)
	defer b.running.Add(-1)
	for {
		p := b.peak.Load()
		if n <= p || b.peak.CompareAndSwap(p, n) {
			break
		}
	}
	select {
	case <-b.release:
		return Output{Result: image.Result{Image: "done"}}, nil
	case <-ctx.Done():
		return Output{}, ctx.Err()
	}
}

func key(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestTheRunnerNeverRunsMoreBuildsThanItsLimit(t *testing.T) {
	b := &blockingBuild{release: make(chan struct{})}
	var notified sync.Map
	r := NewRunner(b.run, func(k types.NamespacedName) { notified.Store(k, true) }, func(Status) {}, clock.RealClock{}, 2)
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		r.Submit(Job{Build: key(n), Attempt: 1, Timeout: time.Minute})
	}
	waitFor(t, "two running builds", func() bool { return b.running.Load() == 2 })
	if st, _ := r.Status(key("e")); st.State != Queued {
		t.Fatalf("the fifth build should wait in the queue, is in state %d", st.State)
	}
	close(b.release)
	waitFor(t, "every build done", func() bool {
		for _, n := range []string{"a", "b", "c", "d", "e"} {
			if st, _ := r.Status(key(n)); st.State != Done {
				return false
			}
		}
		return true
	})
	if b.peak.Load() != 2 {
		t.Fatalf("peak of %d builds at once, limit 2", b.peak.Load())
	}
	if _, ok := notified.Load(key("e")); !ok {
		t.Fatal("the end of a build was not notified")
	}
}

func TestSubmittingTheSameAttemptTwiceRunsOneBuild(t *testing.T) {
	var calls atomic.Int32
	r := NewRunner(func(context.Context, Job) (Output, error) {
		calls.Add(1)
		return Output{}, nil
	}, func(types.NamespacedName) {}, func(Status) {}, clock.RealClock{}, 1)
	r.Submit(Job{Build: key("a"), Attempt: 1, Timeout: time.Minute})
	r.Submit(Job{Build: key("a"), Attempt: 1, Timeout: time.Minute})
	waitFor(t, "the build", func() bool { st, _ := r.Status(key("a")); return st.State == Done })
	if calls.Load() != 1 {
		t.Fatalf("%d builds ran", calls.Load())
	}
}

func TestCancelStopsARunningBuild(t *testing.T) {
	b := &blockingBuild{release: make(chan struct{})}
	r := NewRunner(b.run, func(types.NamespacedName) {}, func(Status) {}, clock.RealClock{}, 1)
	r.Submit(Job{Build: key("a"), Attempt: 1, Timeout: time.Minute})
	waitFor(t, "the build to run", func() bool { return b.running.Load() == 1 })
	if !r.Cancel(key("a")) {
		t.Fatal("Cancel found no job")
	}
	waitFor(t, "the build to stop", func() bool { return b.running.Load() == 0 && r.Running() == 0 })
	if _, ok := r.Status(key("a")); ok {
		t.Fatal("a cancelled job is still known")
	}
}

func TestABuildThatOutlivesItsTimeoutFails(t *testing.T) {
	b := &blockingBuild{release: make(chan struct{})}
	r := NewRunner(b.run, func(types.NamespacedName) {}, func(Status) {}, clock.RealClock{}, 1)
	r.Submit(Job{Build: key("a"), Attempt: 1, Timeout: 50 * time.Millisecond})
	waitFor(t, "the timeout", func() bool { st, _ := r.Status(key("a")); return st.State == Done })
	st, _ := r.Status(key("a"))
	if st.Err == nil || !errors.Is(st.Err, context.DeadlineExceeded) {
		t.Fatalf("want a timeout error, got %v", st.Err)
	}
}

func TestBackoffDoublesUpToACap(t *testing.T) {
	base := time.Second
	for failed, want := range map[int32]time.Duration{0: 0, 1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 9: 32 * time.Second} {
		if got := Backoff(base, failed); got != want {
			t.Errorf("after %d failures: got %s, want %s", failed, got, want)
		}
	}
}

func TestTheSummaryOfAMavenKitTellsWhatItBuiltOnAndDownloaded(t *testing.T) {
	out := Output{Result: image.Result{Image: "registry/kit@sha256:d"}, Artifacts: make([]camelv1.Artifact, 40),
		Maven: &MavenOutput{Parent: "kit-runtime", Added: 3, DownloadedFiles: 0}}
	want := "built and pushed registry/kit@sha256:d: 40 jars, 3 of them in a new layer on kit kit-runtime; Maven downloaded 0 files (0 bytes)"
	if got := out.Summary(); got != want {
		t.Fatalf("Summary() = %q, want %q", got, want)
	}
	if got := (Output{Result: image.Result{Image: "registry/kit@sha256:d"}}).Summary(); got != "built and pushed registry/kit@sha256:d "+DependencyListNote {
		t.Fatalf("a dependency list's Summary() = %q", got)
	}
}

// TestParseSummaryReadsBackWhatSummaryWrote: the bench reads a Build's
// figures from its condition, on a kit or on the base image alike.
func TestParseSummaryReadsBackWhatSummaryWrote(t *testing.T) {
	for _, m := range []MavenOutput{{Parent: "kit-runtime", Added: 3}, {Added: 63, DownloadedFiles: 415, DownloadedBytes: 38_123_456}} {
		out := Output{Result: image.Result{Image: "registry/kit@sha256:d"}, Artifacts: make([]camelv1.Artifact, 63), Maven: &m}
		jars, got, ok := ParseSummary(out.Summary())
		if !ok || jars != 63 || got != m {
			t.Errorf("ParseSummary(%q) = %d, %+v, %v; want 63, %+v", out.Summary(), jars, got, ok, m)
		}
	}
	if _, _, ok := ParseSummary("built and pushed registry/kit@sha256:d"); ok {
		t.Error("a dependency list's summary parses as a Maven build's")
	}
}

func TestWhatARunningBuildWaitsForIsInItsStatusAndTold(t *testing.T) {
	release, reported := make(chan struct{}), make(chan struct{})
	var notified atomic.Int32
	r := NewRunner(func(ctx context.Context, j Job) (Output, error) {
		j.Report("container maven is waiting: ErrImagePull: the registry is down")
		j.Report("container maven is waiting: ErrImagePull: the registry is down") // unchanged: told once
		close(reported)
		<-release
		j.Report("")
		return Output{}, nil
	}, func(types.NamespacedName) { notified.Add(1) }, func(Status) {}, clock.RealClock{}, 1)
	r.Submit(Job{Build: key("a"), Attempt: 1, Timeout: time.Minute})
	<-reported
	st, _ := r.Status(key("a"))
	if st.Waiting != "container maven is waiting: ErrImagePull: the registry is down" {
		t.Fatalf("Waiting %q", st.Waiting)
	}
	waitFor(t, "the start and the change told", func() bool { return notified.Load() == 2 })
	time.Sleep(20 * time.Millisecond)
	if n := notified.Load(); n != 2 {
		t.Fatalf("told %d times, want 2: the start and the change, not the same report again", n)
	}
	close(release)
	waitFor(t, "the build", func() bool { st, _ := r.Status(key("a")); return st.State == Done })
}
