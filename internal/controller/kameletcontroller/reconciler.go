// Package kameletcontroller validates Kamelets into a Ready or Error status that a user can act on.
// Their name, property schema and template (internal/kamelet.Validate) decide it, and the reason
// and message say what is wrong. Which operator validates which Kamelet is the rule of Validates.
package kameletcontroller

import (
	"context"
	"strings"

	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/kamelet"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// Reconciler validates Kamelets.
type Reconciler struct {
	// Client reads from the operator's cache (see CacheByObject).
	Client     client.Client
	OperatorID string
	// Namespace is the operator's namespace.
	Namespace string
	Recorder  events.EventRecorder
}

// +kubebuilder:rbac:groups=camel.apache.org,resources=kamelets,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=camel.apache.org,resources=kamelets/status,verbs=get;update;patch

// SetupWithManager registers the controller. Only changes of the spec or
// of the assignment cause a reconcile; its own status writes do not.
func (r *Reconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager, wrap controller.Wrap) error {
	specOrAssignment := predicate.Or(predicate.GenerationChangedPredicate{},
		predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{})
	return ctrl.NewControllerManagedBy(mgr).
		Named("kamelet").
		For(&camelv1.Kamelet{}, builder.WithPredicates(specOrAssignment)).
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: controller.Workers}).
		Complete(wrap("Kamelet", r))
}

// Reconcile reconciles one Kamelet; a lost optimistic-lock race (two
// operators of one namespace validating the same Kamelet) is retried
// quietly.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return controller.RequeueOnConflict(r.reconcile(ctx, req))
}

// reconcile validates the Kamelet and writes its status when it changed.
func (r *Reconciler) reconcile(ctx context.Context, req reconcile.Request) (result reconcile.Result, retErr error) {
	k := &camelv1.Kamelet{}
	if err := r.Client.Get(ctx, req.NamespacedName, k); err != nil {
		// Deleted, or no longer in this operator's share.
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !k.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	if k.Labels[camelv1.OperatorIDLabel] == r.OperatorID && !ownership.Owns(k.Annotations, r.OperatorID) {
		// Assigned elsewhere: hand the label over. A Kamelet this
		// operator still validates comes back with the new label.
		return reconcile.Result{}, r.release(ctx, k)
	}
	if !Validates(k.Namespace, k.Annotations, r.OperatorID, r.Namespace) {
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
		reconcileDefinition,
	}
	return controller.RunSteps(ctx, s, &s.Outcome, steps...)
}

// scope holds what the steps of one reconcile share.
type scope struct {
	// k is the Kamelet as read; computeStatus updates its status.
	k *camelv1.Kamelet
	// Outcome is set by reconcileDefinition when the Kamelet is invalid: only the user can fix it.
	controller.Outcome
}

// patchStatus computes the status and writes it when it changed, with a
// precondition on the resourceVersion read; a new phase is told in an Event.
func (r *Reconciler) patchStatus(ctx context.Context, before *camelv1.Kamelet, s *scope) error {
	computeStatus(s)
	wrote, err := controller.PatchStatus(ctx, r.Client, before, s.k, before.Status, s.k.Status)
	if wrote && before.Status.Phase != s.k.Status.Phase {
		r.recordTransition(s.k)
	}
	return err
}

// reconcileDefinition checks the Kamelet's name, property schema and template; the
// reason is the first problem's, and the message lists them all.
func reconcileDefinition(_ context.Context, s *scope) (reconcile.Result, error) {
	problems := kamelet.Validate(s.k)
	if len(problems) == 0 {
		return reconcile.Result{}, nil
	}
	msgs := make([]string, len(problems))
	for i, p := range problems {
		msgs[i] = p.Message
	}
	s.Failure = controller.Because(controller.Reason(problems[0].Reason), strings.Join(msgs, "; "))
	return reconcile.Result{}, nil
}

// release moves the label of a Kamelet assigned elsewhere to the operator it names, or removes it.
// The patch has a precondition on the version read.
func (r *Reconciler) release(ctx context.Context, k *camelv1.Kamelet) error {
	return controller.HandLabelOver(ctx, r.Client, k)
}

// recordTransition emits an Event for the Kamelet's new phase, a Warning in Error.
func (r *Reconciler) recordTransition(k *camelv1.Kamelet) {
	controller.PhaseEvent(r.Recorder, k, nil, "Kamelet", "Validate", string(k.Status.Phase),
		k.Status.Phase == camelv1.KameletPhaseError, k.Status.Conditions)
}
