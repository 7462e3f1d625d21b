// Package pipecontroller reconciles Pipes and KameletBindings into the Integration that runs them.
// One implementation serves both kinds: the binding is compiled by internal/pipe with the Kamelets
// it names, and the result is applied as an Integration of the same name, controlled by the binding
// and carrying its operator id, so that the Integration is served by the operator the binding is
// assigned to, and moves when the binding moves.
//
// A move of a binding from operator A to operator B is a handover: A, seeing its binding assigned
// elsewhere, hands the binding's label over (its last write to it); B then applies the Integration
// with B's id in its annotation, which is the Integration's own move, carried out by the
// Integration controllers (A releases it and hands its label over, B adopts it; the Deployment is
// updated in place).
package pipecontroller

import (
	"context"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// kameletIndex indexes bindings by the names of the Kamelets they use.
const kameletIndex = "caravan.kamelets"

// Timing of the waits that no watch ends.
const (
	// kameletRetry is how soon a binding that calls a Kamelet the cluster
	// lacks looks for it again: Kamelets outside the operator's cache are
	// not watched.
	kameletRetry = time.Minute
	// kameletRecheck is how soon a binding in error looks again at the
	// Kamelets of its namespace, which are not watched.
	kameletRecheck = time.Minute
	// nameTakenRetry is how soon a binding whose Integration name is
	// taken looks again.
	nameTakenRetry = 30 * time.Second
	// deletionRetry is how soon a binding waits for the Integration of a
	// previous binding of the same name to be deleted.
	deletionRetry = 2 * time.Second
	// creatingRecheck is how often a binding whose Integration is not ready
	// yet is looked at again without an event.
	creatingRecheck = 10 * time.Second
)

// Reconciler reconciles the bindings of one kind.
type Reconciler struct {
	Kind Kind
	// Client reads from the operator's cache: its bindings, its
	// Integrations and the Kamelets of its namespace.
	Client client.Client
	// APIReader reads from the API server what the cache does not hold. That is Kamelets in the
	// bindings' namespaces, and an Integration of the binding's name that is not (yet) in this
	// operator's share.
	APIReader  client.Reader
	OperatorID string
	// Namespace is the operator's namespace, where Kamelets are looked up
	// after the binding's own namespace.
	Namespace    string
	FieldManager string
	Recorder     events.EventRecorder
}

// +kubebuilder:rbac:groups=camel.apache.org,resources=pipes;kameletbindings,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=camel.apache.org,resources=pipes/status;kameletbindings/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=camel.apache.org,resources=pipes/finalizers;kameletbindings/finalizers,verbs=update
// +kubebuilder:rbac:groups=camel.apache.org,resources=integrations,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=camel.apache.org,resources=kamelets,verbs=get;list;watch

// scope holds what the steps of one reconcile share.
type scope struct {
	// binding is the Pipe or KameletBinding as read; spec and status are its parts.
	binding client.Object
	spec    *camelv1.PipeSpec
	status  *camelv1.PipeStatus
	// integration is set by reconcileObserved: the generated Integration
	// as this operator's cache holds it, if it does.
	integration *camelv1.Integration
	// compiled is set by reconcileSpec: the spec of the Integration. missing are the Kamelets it
	// calls that the cluster lacks, for the runtime to find on its classpath; compiledRead tells
	// that it compiled.
	compiled     *camelv1.IntegrationSpec
	missing      []string
	compiledRead bool
	// ignoredDataTypes are set by reconcileSpec: the endpoints' data types, not acted on.
	ignoredDataTypes []string
	// desired is set by reconcileIntegration: the Integration the binding generates.
	desired *camelv1.Integration
	// applied is set by reconcileIntegration when it wrote the Integration.
	applied bool
	// replaceForeign is set by reconcileForeign: the Integration another operator made is to be
	// replaced with this operator's.
	replaceForeign bool
	// Outcome is set by a step that waits, found bad input, found the binding no longer this
	// operator's, or found the namespace being deleted. The third is found on a fresh read. In a
	// namespace being deleted the binding goes too: its Integration cannot be applied any more. The
	// last two write nothing.
	controller.Outcome
}

// SetupWithManager registers the controller for r.Kind, its watches and
// its index of Kamelet names.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, wrap controller.Wrap) error {
	err := mgr.GetFieldIndexer().IndexField(ctx, r.Kind.New(), kameletIndex, func(o client.Object) []string {
		spec, _ := r.Kind.Parts(o)
		return referencedKamelets(spec)
	})
	if err != nil {
		return err
	}
	// Status writes (this controller's own) change neither generation,
	// annotations nor labels, so they do not cause another reconcile.
	specOrAssignment := predicate.Or(predicate.GenerationChangedPredicate{},
		predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{})
	kind := r.Kind.GVK.Kind
	return ctrl.NewControllerManagedBy(mgr).
		Named(strings.ToLower(kind)).
		For(r.Kind.New(), builder.WithPredicates(specOrAssignment)).
		Owns(&camelv1.Integration{}).
		Watches(&camelv1.Kamelet{}, handler.EnqueueRequestsFromMapFunc(r.bindingsOfKamelet),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: controller.Workers}).
		Complete(wrap(kind, r))
}

// bindingsOfKamelet maps a Kamelet of the cache to the bindings that use one of its name. Those are
// in its namespace or, when it is in the operator's namespace, where every binding may find it,
// anywhere. The cache holds the Kamelets of the kamelet controller's CacheByObject.
func (r *Reconciler) bindingsOfKamelet(ctx context.Context, k client.Object) []reconcile.Request {
	opts := []client.ListOption{client.MatchingFields{kameletIndex: k.GetName()}}
	if k.GetNamespace() != r.Namespace {
		opts = append(opts, client.InNamespace(k.GetNamespace()))
	}
	list := r.Kind.NewList()
	if err := r.Client.List(ctx, list, opts...); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o.(client.Object))})
		return nil
	})
	return reqs
}

// Reconcile reconciles one binding; a lost optimistic-lock race is
// retried quietly.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return controller.RequeueOnConflict(r.reconcile(ctx, req))
}

// reconcile runs the steps in order; the status is computed from what
// they observed and written once, at the end.
func (r *Reconciler) reconcile(ctx context.Context, req reconcile.Request) (result reconcile.Result, retErr error) {
	b := r.Kind.New()
	if err := r.Client.Get(ctx, req.NamespacedName, b); err != nil {
		// Not in this operator's cache: deleted (its Integration goes with
		// it, by owner reference), or assigned to another operator, which
		// takes its Integration over. Neither calls for a cleanup here.
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !b.GetDeletionTimestamp().IsZero() {
		return reconcile.Result{}, nil
	}
	if !ownership.Owns(b.GetAnnotations(), r.OperatorID) {
		// Assigned elsewhere, and still labelled for this operator.
		return reconcile.Result{}, r.release(ctx, b)
	}
	before := b.DeepCopyObject().(client.Object)
	s := &scope{binding: b}
	s.spec, s.status = r.Kind.Parts(b)
	defer func() {
		// A status that could not be written is retried, even after bad
		// input (a terminal error would not be).
		if err := r.patchStatus(ctx, before, s); err != nil {
			result, retErr = reconcile.Result{}, err
			return
		}
		if retErr == nil && result.IsZero() && !s.Quiet && s.status.Phase == camelv1.PipePhaseCreating {
			// The Integration's own changes bring the binding up to
			// date; a look now and then makes sure none is missed.
			result = reconcile.Result{RequeueAfter: creatingRecheck}
		}
	}()
	steps := []controller.Step[*scope]{
		r.reconcileObserved,
		r.reconcileForeign,
		r.reconcileSpec,
		// Last: it applies what the steps above observed and compiled.
		r.reconcileIntegration,
	}
	res, err := controller.RunSteps(ctx, s, &s.Outcome, steps...)
	if err == nil && res.IsZero() && len(s.missing) > 0 {
		res.RequeueAfter = kameletRetry
	}
	return res, err
}

// patchStatus computes the status and writes it when it changed, with a precondition on the
// resourceVersion read. A status computed from a stale read never overwrites a newer one; a new
// phase is told in an Event.
func (r *Reconciler) patchStatus(ctx context.Context, before client.Object, s *scope) error {
	if s.Quiet {
		return nil
	}
	computeStatus(s)
	_, old := r.Kind.Parts(before)
	wrote, err := controller.PatchStatus(ctx, r.Client, before, s.binding, *old, *s.status)
	if wrote && old.Phase != s.status.Phase {
		r.recordTransition(s)
	}
	return err
}

// recordTransition emits an Event for the binding's new phase, a Warning in Error.
func (r *Reconciler) recordTransition(s *scope) {
	controller.PhaseEvent(r.Recorder, s.binding, s.integration, r.Kind.GVK.Kind, "Reconcile", string(s.status.Phase),
		s.status.Phase == camelv1.PipePhaseError, s.status.Conditions)
}
