// Package kameletcontroller validates Kamelets: their name, property schema and
// template (internal/kamelet.Validate) become a Ready or Error status with
// the reason and a message a user can act on. Which operator validates
// which Kamelet is the rule of Validates.
package kameletcontroller

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// ReasonValid is the reason of the Ready condition of a valid Kamelet.
const ReasonValid controller.Reason = "Valid"

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
	if k.Labels[camelv1.OperatorIDLabel] == r.OperatorID && !ownership.Owns(k.Annotations, r.OperatorID) {
		// Assigned elsewhere: hand the label over. A Kamelet this
		// operator still validates comes back with the new label.
		return reconcile.Result{}, r.release(ctx, k)
	}
	if !Validates(k.Namespace, k.Annotations, r.OperatorID, r.Namespace) || !k.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	before := k.DeepCopy()
	s := &scope{k: k}
	defer func() {
		computeStatus(s)
		wrote, err := controller.PatchStatus(ctx, r.Client, before, k, before.Status, k.Status)
		if err != nil {
			// The status must land: a failed write is retried, even
			// when the steps ended in a terminal error.
			retErr = err
			return
		}
		if wrote && before.Status.Phase != k.Status.Phase {
			r.recordTransition(k)
		}
	}()
	return controller.RunSteps(ctx, s, &s.Outcome, validate)
}

// scope is what one reconcile of a Kamelet knows.
type scope struct {
	k *camelv1.Kamelet
	// Outcome is set when the Kamelet is invalid: only the user can fix it.
	controller.Outcome
}

// validate checks the Kamelet's name, property schema and template; the
// reason is the first problem's, and the message lists them all.
func validate(_ context.Context, s *scope) (reconcile.Result, error) {
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

// release moves the label of a Kamelet no longer annotated for this
// operator to the operator it names, or removes it, with a precondition
// on the version read.
func (r *Reconciler) release(ctx context.Context, k *camelv1.Kamelet) error {
	return controller.HandLabelOver(ctx, r.Client, k)
}

func (r *Reconciler) recordTransition(k *camelv1.Kamelet) {
	kind, note := corev1.EventTypeNormal, fmt.Sprintf("Kamelet %s in phase %q", k.Name, k.Status.Phase)
	if k.Status.Phase == camelv1.KameletPhaseError {
		kind = corev1.EventTypeWarning
		note += ": " + k.Status.GetCondition(camelv1.ConditionReady).Message
	}
	if len(note) > 1024 { // an Event's note holds at most 1 kB
		note = note[:1021] + "..."
	}
	r.Recorder.Eventf(k, nil, kind, "KameletPhaseUpdated", "Validate", note)
}

// computeStatus derives the status from what validate found: Ready with
// the properties and their defaults, or Error with a Ready=False
// condition, and Stalled, since only the user can fix a Kamelet.
func computeStatus(s *scope) {
	k, st := s.k, &s.k.Status
	st.ObservedGeneration = k.Generation
	st.Properties = properties(k)
	if s.Failure == nil {
		st.Phase = camelv1.KameletPhaseReady
		controller.SetProgress(&st.Conditions, k.Generation, metav1.ConditionTrue, controller.Current, ReasonValid, "the Kamelet is valid")
		return
	}
	st.Phase = camelv1.KameletPhaseError
	controller.SetProgress(&st.Conditions, k.Generation, metav1.ConditionFalse, controller.Stuck, s.Failure.Reason, s.Failure.Message)
}

// properties lists the definition's properties, sorted by name, with
// their defaults; none when the definition cannot be read.
func properties(k *camelv1.Kamelet) []camelv1.KameletProperty {
	props, _, err := kamelet.Properties(k)
	if err != nil || len(props) == 0 {
		return nil
	}
	out := make([]camelv1.KameletProperty, 0, len(props))
	for _, name := range slices.Sorted(maps.Keys(props)) {
		out = append(out, camelv1.KameletProperty{Name: name, Default: props[name].DefaultValue()})
	}
	return out
}
