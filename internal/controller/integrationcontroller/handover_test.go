package integrationcontroller

import (
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestALongWaitForAReleaseIsReportedOncePerWait(t *testing.T) {
	g := NewWithT(t)
	var h holds
	a, b := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	track := func(key types.NamespacedName, waiting bool, at time.Duration) []any {
		report, n := h.track(key, waiting, t0.Add(at))
		return []any{report, n}
	}

	g.Expect(track(a, true, 0)).To(Equal([]any{time.Duration(0), 1}))
	g.Expect(track(a, true, 5*time.Second)).To(Equal([]any{time.Duration(0), 1}))
	g.Expect(track(b, true, 6*time.Second)).To(Equal([]any{time.Duration(0), 2}))
	g.Expect(track(a, true, 11*time.Second)).To(Equal([]any{11 * time.Second, 2}), "a has waited past holdWarnAfter")
	g.Expect(track(a, true, 30*time.Second)).To(Equal([]any{time.Duration(0), 2}), "reported once")
	g.Expect(track(a, false, 31*time.Second)).To(Equal([]any{time.Duration(0), 1}), "a was adopted")
	g.Expect(track(a, false, 32*time.Second)).To(Equal([]any{time.Duration(0), 1}), "a waits no more")
	g.Expect(track(a, true, 40*time.Second)).To(Equal([]any{time.Duration(0), 2}), "a new wait starts afresh")
	g.Expect(track(a, true, 50*time.Second)).To(Equal([]any{10 * time.Second, 2}), "and is reported in its turn")
}

func TestAFailureIsDatedFromTheFirstOfItsRun(t *testing.T) {
	g := NewWithT(t)
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC))
	r := &Reconciler{Clock: clock}
	key := types.NamespacedName{Namespace: "ns", Name: "a"}
	refused := errors.New("denied")
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "integrations"}, "a", errors.New("modified"))

	_, first := r.trackFailure(key, refused)
	clock.SetTime(clock.Now().Add(time.Minute))
	err, since := r.trackFailure(key, refused)
	g.Expect(err).To(MatchError(refused))
	g.Expect(since).To(Equal(first), "a failure that goes on keeps its first time")
	err, _ = r.trackFailure(key, conflict)
	g.Expect(err).To(BeNil(), "a lost race is no failure to report")
	err, _ = r.trackFailure(key, reconcile.TerminalError(refused))
	g.Expect(err).To(BeNil(), "bad input is the Stalled condition's")
	_, since = r.trackFailure(key, refused)
	g.Expect(since).To(Equal(clock.Now()), "a new run of failures starts afresh")
}
