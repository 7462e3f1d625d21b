// Package integrationkitcontroller reconciles the IntegrationKits an operator owns.
// An external kit (spec.image set) is Ready as soon as it is seen. A
// platform kit gets one Build, owned by the kit, and takes its image, by
// digest, from that Build once it succeeds.
package integrationkitcontroller

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/kit"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// Reconciler reconciles IntegrationKits.
type Reconciler struct {
	Client     client.Client
	OperatorID string
	// Namespace is the operator's, where its platform lives.
	Namespace string
	// Runner is the operator's build runner, told to cancel the Build of a
	// kit that is deleted.
	Runner   *build.Runner
	Recorder events.EventRecorder
}

// +kubebuilder:rbac:groups=camel.apache.org,resources=integrationkits,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=camel.apache.org,resources=integrationkits/status,verbs=get;update;patch

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager, wrap controller.Wrap) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("integrationkit").
		For(&camelv1.IntegrationKit{}).
		Owns(&camelv1.Build{}).
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: controller.Workers}).
		Complete(wrap("IntegrationKit", r))
}

// scope holds what the steps of one reconcile share.
type scope struct {
	// k is the kit as read; computeStatus updates its status.
	k *camelv1.IntegrationKit
	// spec is set by reconcileSpec: what a platform kit builds.
	spec kit.Spec
	// build is set by reconcileBuild: the kit's Build, once it was read.
	build *camelv1.Build
	// submitted is set by reconcileBuild when the kit had no Build and this
	// reconcile created it.
	submitted bool
	// Outcome is set by reconcileSpec when the kit is invalid (Failure) or
	// external, with nothing to build (Done).
	controller.Outcome
}

// Reconcile reconciles one object; a lost optimistic-lock race is retried
// quietly.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return controller.RequeueOnConflict(r.reconcile(ctx, req))
}

// reconcile runs the steps in order; the status is computed from what
// they observed and written once, at the end.
func (r *Reconciler) reconcile(ctx context.Context, req reconcile.Request) (result reconcile.Result, retErr error) {
	k := &camelv1.IntegrationKit{}
	if err := r.Client.Get(ctx, req.NamespacedName, k); err != nil {
		if apierrors.IsNotFound(err) {
			// Gone from this operator's share. If it was deleted, its
			// build (named like the kit) must stop.
			r.Runner.Cancel(req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !k.DeletionTimestamp.IsZero() {
		r.Runner.Cancel(req.NamespacedName)
		return reconcile.Result{}, nil
	}
	if !ownership.Owns(k.Annotations, r.OperatorID) {
		return reconcile.Result{}, nil
	}
	before := k.DeepCopy()
	s := &scope{k: k}
	defer func() {
		if err := r.patchStatus(ctx, before, s); err != nil {
			// The status must land: a failed write is retried, even
			// when the steps ended in a terminal error.
			retErr = err
		}
	}()
	steps := []controller.Step[*scope]{
		r.reconcileSpec,
		// Last: an external kit, or an invalid one, has no Build.
		r.reconcileBuild,
	}
	return controller.RunSteps(ctx, s, &s.Outcome, steps...)
}

// patchStatus computes the status and writes it when it changed, with a
// precondition on the resourceVersion read; a new phase is told in an Event.
func (r *Reconciler) patchStatus(ctx context.Context, before *camelv1.IntegrationKit, s *scope) error {
	computeStatus(s)
	wrote, err := controller.PatchStatus(ctx, r.Client, before, s.k, before.Status, s.k.Status)
	if wrote && before.Status.Phase != s.k.Status.Phase {
		r.recordTransition(s)
	}
	return err
}

// recordTransition emits an Event for the kit's new phase, a Warning in Error.
func (r *Reconciler) recordTransition(s *scope) {
	k := s.k
	controller.PhaseEvent(r.Recorder, k, s.build, "IntegrationKit", "Reconcile", string(k.Status.Phase),
		k.Status.Phase == camelv1.IntegrationKitPhaseError, k.Status.Conditions)
}
