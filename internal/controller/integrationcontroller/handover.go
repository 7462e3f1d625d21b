package integrationcontroller

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// A move from operator A to operator B is a handover (docs/architecture.md, Handover).
// A, once it sees that the integration is no longer assigned to it,
// records the release in status.ownership, then hands the label over:
// those are its last writes. B adopts only after the release, or after
// A's registration has gone stale when A is gone, so that writes by A
// and by B never interleave.

// handoverRetry is how often the new owner looks for the release when no
// event brought it (the release event, see released, normally does).
const handoverRetry = time.Second

// released passes the update that records an owner's release of an
// integration, for the new owner to adopt it without waiting.
var released = predicate.TypedFuncs[client.Object]{
	UpdateFunc: func(e event.TypedUpdateEvent[client.Object]) bool {
		old, okOld := e.ObjectOld.(*camelv1.Integration)
		cur, okNew := e.ObjectNew.(*camelv1.Integration)
		return okOld && okNew && old.Status.Ownership.ReleasedAt == nil && cur.Status.Ownership.ReleasedAt != nil
	},
}

// releaseIfMoved handles an integration that left this operator's cache:
// deleted, or assigned elsewhere (its label changed at admission). One
// read from the API server tells which.
func (r *Reconciler) releaseIfMoved(ctx context.Context, key types.NamespacedName) error {
	it := &camelv1.Integration{}
	if err := r.APIReader.Get(ctx, key, it); err != nil {
		return client.IgnoreNotFound(err)
	}
	if ownership.Owns(it.Annotations, r.OperatorID) {
		return nil // back already; the watch brings it
	}
	return r.release(ctx, it)
}

// release records that this operator let go of an integration it owned,
// then moves the label to the new assignment. A Caravan operator next finds
// the children as they are; one that is not Caravan's finds them let go of
// (handOver).
func (r *Reconciler) release(ctx context.Context, it *camelv1.Integration) error {
	o := it.Status.Ownership
	if o.Owner == r.OperatorID && o.ReleasedAt == nil {
		before := it.DeepCopy()
		it.Status.Ownership.ReleasedAt = &metav1.Time{Time: r.Clock.Now()}
		patch := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
		if err := r.Client.Status().Patch(ctx, it, patch); err != nil {
			return fmt.Errorf("recording the release: %w", err)
		}
		r.Metrics.Released()
		ctrl.LoggerFrom(ctx).Info("Released integration", "to", ownership.AssignedID(it.Annotations), "epoch", o.Epoch)
	}
	if err := r.handOver(ctx, it); err != nil {
		return err
	}
	if it.Labels[camelv1.OperatorIDLabel] != r.OperatorID {
		return nil
	}
	return controller.HandLabelOver(ctx, r.Client, it)
}

// handKeptBack labels a kept Deployment (see reconcileKept) with the id to of the operator that
// made it, when the integration goes back to that operator: this operator lets go of it as it
// found it.
func (r *Reconciler) handKeptBack(ctx context.Context, it *camelv1.Integration, to string) error {
	d, err := foreignDeployment(ctx, r.APIReader, it)
	if err != nil || d == nil || d.Labels[camelv1.OperatorIDLabel] != r.OperatorID || d.Annotations[camelv1.OperatorIDAnnotation] != to {
		return err
	}
	if err := controller.PatchLabel(ctx, r.Client, d, to); err != nil {
		return fmt.Errorf("handing Deployment %s back to operator %s: %w", d.Name, to, err)
	}
	return nil
}

// reconcileOwnership adopts the integration, or waits for its previous owner's release without
// writing anything. It adopts at once when the integration had no owner or its owner released it
// (this operator too, when the integration comes back), is gone or does not serve the namespace.
// Adoption grows the epoch and, after another owner, re-initialises the integration.
func (r *Reconciler) reconcileOwnership(ctx context.Context, s *scope) (reconcile.Result, error) {
	o := &s.it.Status.Ownership
	if o.Owner == r.OperatorID && o.ReleasedAt == nil {
		return reconcile.Result{}, nil
	}
	if o.Owner != "" && o.ReleasedAt == nil {
		live, err := r.Registrations.Serves(ctx, o.Owner, s.it.Namespace)
		if err != nil {
			return reconcile.Result{}, err
		}
		if live {
			s.hold = true
			return reconcile.Result{RequeueAfter: handoverRetry}, nil
		}
	}
	if err := r.keepForeignDeployment(ctx, s); err != nil {
		return reconcile.Result{}, err
	}
	if o.Owner != "" {
		// A move re-initialises: the kit chosen by the previous owner is
		// dropped, this operator reuses or builds one of its own.
		s.it.Status.IntegrationKit = nil
		s.it.Status.InitializationTimestamp = &metav1.Time{Time: r.Clock.Now()}
	}
	o.Previous = o.Owner
	if o.Previous == "" && o.Kept != nil {
		o.Previous = o.Kept.From
	}
	o.Owner = r.OperatorID
	o.Epoch++
	o.ReleasedAt = nil
	return reconcile.Result{}, nil
}

// holdWarnAfter is how long an integration waits for a live previous owner's release before a
// Warning Event says so. A release normally follows the assignment within a second.
const holdWarnAfter = 10 * time.Second

// holds are the integrations that wait for their previous owner's
// release: since when, and whether the wait was reported.
type holds struct {
	mu sync.Mutex
	m  map[types.NamespacedName]*hold
}

type hold struct {
	since    time.Time
	reported bool
}

// track records whether key waits at now. It returns how long key has
// waited when that passed holdWarnAfter for the first time (else 0), and
// how many integrations wait.
func (h *holds) track(key types.NamespacedName, waiting bool, now time.Time) (report time.Duration, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !waiting {
		delete(h.m, key)
		return 0, len(h.m)
	}
	if h.m == nil {
		h.m = map[types.NamespacedName]*hold{}
	}
	w, ok := h.m[key]
	if !ok {
		w = &hold{since: now}
		h.m[key] = w
	}
	if waited := now.Sub(w.since); waited >= holdWarnAfter && !w.reported {
		w.reported = true
		return waited, len(h.m)
	}
	return 0, len(h.m)
}

// trackHold records whether the integration key waits for its previous owner's release. The wait
// goes in the gauge and, once it has lasted holdWarnAfter, in a Warning Event (an Event is not a
// write to the integration: the previous owner's writes and this operator's still do not
// interleave).
func (r *Reconciler) trackHold(key types.NamespacedName, it *camelv1.Integration, waiting bool) {
	waited, n := r.holds.track(key, waiting, r.Clock.Now())
	r.Metrics.SetAwaitingRelease(n)
	if waited > 0 {
		prev := it.Status.Ownership.Owner
		controller.Event(r.Recorder, it, nil, corev1.EventTypeWarning, "AwaitingRelease", "Adopt",
			fmt.Sprintf("Integration %s is assigned to operator %s, which has waited %s for operator %s to release it; operator %s is live and has not",
				it.Name, r.OperatorID, waited.Round(time.Second), prev, prev))
	}
}
