// Package fleet runs the operators that IntegrationOperators declare. For each one whose spec names
// a namespace, it keeps the objects that caravan install would create (identity, rights,
// Deployment, platform, admission bindings) as declared, reports the roll-out in the
// IntegrationOperator's status next to what the operator itself registers there, runs the canary
// its spec.canary declares (a move of another operator's integrations to it in waves), and removes
// them when the IntegrationOperator is deleted, leaving its integrations as orphans.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// Finalizer holds a declared IntegrationOperator until the fleet controller
// has removed its operator's objects.
const Finalizer = install.FleetFinalizer

// holderCheckEvery is how often a fleet controller looks again whether
// the one that runs an operator still exists, to take it over if not.
const holderCheckEvery = 30 * time.Second

// elsewhereRecheck is how often an operator registered from another namespace than the declared one is looked at again.
const elsewhereRecheck = time.Minute

// awaitEvery is how often a roll-out is looked at again while the
// operator has not registered yet (nothing the fleet watches changes then).
const awaitEvery = 2 * time.Second

// Reconciler runs the declared operators.
type Reconciler struct {
	// Client reads through the manager's cache and writes.
	Client client.Client
	// Direct reads and writes, uncached, what the cache does not hold. That is the installation's
	// objects, and the resources an operator's removal leaves as orphans. It also watches what
	// the installer waits for.
	Direct   client.WithWatch
	Defaults install.FleetDefaults
	// Identity names this fleet controller (namespace/name) in the
	// FleetAnnotation of the operators it runs.
	Identity string
	Recorder events.EventRecorder
	Clock    clock.PassiveClock

	// converged records when each operator's objects were last applied.
	converged convergeMarks
}

// SetupWithManager watches IntegrationOperators, except their heartbeats, and the operators' Deployments.
func (r *Reconciler) SetupWithManager(_ context.Context, mgr manager.Manager, wrap controller.Wrap) error {
	byInstance := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		id := o.GetLabels()["app.kubernetes.io/instance"]
		if id == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: id}}}
	})
	// One worker: operators are few, and a reconcile applies a whole installation.
	return builder.ControllerManagedBy(mgr).
		Named("fleet").
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: 1}).
		For(&camelv1alpha1.IntegrationOperator{}, builder.WithPredicates(notHeartbeat())).
		Watches(&appsv1.Deployment{}, byInstance).
		Complete(wrap("IntegrationOperator", r))
}

// notHeartbeat passes every change of an IntegrationOperator but the renewal of its registration. A
// renewal would otherwise bring a reconcile per operator every heartbeat.
func notHeartbeat() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		before, ok1 := e.ObjectOld.(*camelv1alpha1.IntegrationOperator)
		after, ok2 := e.ObjectNew.(*camelv1alpha1.IntegrationOperator)
		if !ok1 || !ok2 {
			return true
		}
		return before.Generation != after.Generation || !after.DeletionTimestamp.Equal(before.DeletionTimestamp) ||
			!slices.Equal(before.Finalizers, after.Finalizers) ||
			before.Annotations[camelv1alpha1.FleetAnnotation] != after.Annotations[camelv1alpha1.FleetAnnotation] ||
			before.Status.Namespace != after.Status.Namespace || before.Status.Version != after.Status.Version ||
			before.Status.Leader != after.Status.Leader
	}}
}

// Reconcile keeps one declared operator as its IntegrationOperator says. A status write that lost
// an optimistic-lock race to the operator's own (its heartbeat) is retried quietly.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return controller.RequeueOnConflict(r.reconcile(ctx, req))
}

// reconcile converges the operator's objects and runs its canary; the fleet's part of the status is written once, at the end.
func (r *Reconciler) reconcile(ctx context.Context, req reconcile.Request) (result reconcile.Result, retErr error) {
	iop := &camelv1alpha1.IntegrationOperator{}
	if err := r.Client.Get(ctx, req.NamespacedName, iop); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !iop.Declared() && !controllerutil.ContainsFinalizer(iop, Finalizer) {
		return reconcile.Result{}, nil // installed by caravan install
	}
	if iop.Spec.Canary != nil {
		// A canary's status decides what moves: it is read as stored,
		// never from a cache that may not hold its last write yet.
		if err := r.Direct.Get(ctx, req.NamespacedName, iop); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
	}
	// Unlike the operator's controllers, the fleet checks its claim before the deletion: only the
	// fleet controller that runs an operator removes it.
	if holder := iop.Annotations[camelv1alpha1.FleetAnnotation]; holder != "" && holder != r.Identity {
		gone, err := r.holderGone(ctx, holder)
		if err != nil {
			return reconcile.Result{}, err
		}
		if !gone {
			log.FromContext(ctx).Info("Left to the fleet controller that runs it", "holder", holder)
			return reconcile.Result{RequeueAfter: holderCheckEvery}, nil
		}
		log.FromContext(ctx).Info("Taking the operator over: the fleet controller that ran it is gone", "holder", holder)
	}
	if !iop.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, r.remove(ctx, iop)
	}
	if claimed, err := r.claim(ctx, iop); err != nil || !claimed {
		return reconcile.Result{}, err
	}
	before := iop.DeepCopy()
	defer func() {
		if err := r.writeStatus(ctx, before, iop); err != nil {
			retErr = errors.Join(retErr, err)
		}
	}()
	result, err := r.converge(ctx, iop)
	if err != nil {
		return result, err
	}
	canaryResult, err := r.reconcileCanary(ctx, iop)
	return soonest(result, canaryResult), err
}

// soonest is the result that asks to come back first.
func soonest(a, b reconcile.Result) reconcile.Result {
	if a.RequeueAfter == 0 || (b.RequeueAfter != 0 && b.RequeueAfter < a.RequeueAfter) {
		return b
	}
	return a
}

// fleetConditions are the conditions of an IntegrationOperator that the
// fleet controller alone writes; the operator writes the others.
var fleetConditions = []string{camelv1alpha1.ConditionDeployed, camelv1alpha1.ConditionCanary,
	camelv1.ConditionReconciling, camelv1.ConditionStalled}

// writeStatus writes the fleet's part of iop's status, read as before,
// with an optimistic lock. A write that loses to the operator's own (its
// heartbeat, every few seconds, may land while a canary's wave is checked)
// reads the IntegrationOperator again, puts the fleet's part onto what it
// read, and tries again: the fleet's conditions and status.canary are its
// own, the rest is the operator's.
func (r *Reconciler) writeStatus(ctx context.Context, before, iop *camelv1alpha1.IntegrationOperator) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		_, err := controller.PatchStatus(ctx, r.Direct, before, iop, before.Status, iop.Status)
		if !apierrors.IsConflict(err) {
			return err
		}
		fresh := &camelv1alpha1.IntegrationOperator{}
		if getErr := r.Direct.Get(ctx, client.ObjectKeyFromObject(iop), fresh); getErr != nil {
			return getErr
		}
		mine := iop.Status
		*before = *fresh.DeepCopy()
		fresh.Status.Canary = mine.Canary
		for _, t := range fleetConditions {
			if c := meta.FindStatusCondition(mine.Conditions, t); c != nil {
				meta.SetStatusCondition(&fresh.Status.Conditions, *c)
			} else {
				meta.RemoveStatusCondition(&fresh.Status.Conditions, t)
			}
		}
		*iop = *fresh
		return err
	})
}

// holderGone tells whether the fleet controller named holder
// (namespace/name) no longer exists: its Deployment is gone.
func (r *Reconciler) holderGone(ctx context.Context, holder string) (bool, error) {
	ns, name, ok := strings.Cut(holder, "/")
	if !ok {
		return true, nil
	}
	err := r.Direct.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &appsv1.Deployment{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

// claim makes this fleet controller the one that runs iop, and reports whether it is. The finalizer
// holds iop until its objects are removed; two fleet controllers racing for it are told apart by
// the optimistic lock of the update.
func (r *Reconciler) claim(ctx context.Context, iop *camelv1alpha1.IntegrationOperator) (bool, error) {
	if iop.Annotations[camelv1alpha1.FleetAnnotation] == r.Identity && controllerutil.ContainsFinalizer(iop, Finalizer) {
		return true, nil
	}
	if iop.Annotations == nil {
		iop.Annotations = map[string]string{}
	}
	iop.Annotations[camelv1alpha1.FleetAnnotation] = r.Identity
	controllerutil.AddFinalizer(iop, Finalizer)
	if err := r.Client.Update(ctx, iop); err != nil {
		if apierrors.IsConflict(err) {
			return false, nil // the watch brings the winner's write
		}
		return false, fmt.Errorf("claiming operator %s: %w", iop.Name, err)
	}
	return true, nil
}

// converge applies the declared operator's objects and reports its roll-out. It is Deployed once
// the Deployment is Current and the operator of the declared version has registered from the
// declared namespace.
func (r *Reconciler) converge(ctx context.Context, iop *camelv1alpha1.IntegrationOperator) (reconcile.Result, error) {
	if ns := iop.Status.Namespace; ns != "" && ns != iop.Spec.Namespace && ownership.FromOperator(iop).Live(r.Clock.Now()) {
		r.set(iop, metav1.ConditionFalse, controller.Stuck, ReasonRegisteredElsewhere, fmt.Sprintf(
			"operator %s runs in namespace %s, not the declared %s: uninstall it there (caravan uninstall -x %s -n %s)",
			iop.Name, ns, iop.Spec.Namespace, iop.Name, ns))
		return reconcile.Result{RequeueAfter: elsewhereRecheck}, nil
	}
	cfg, err := install.DeclaredConfig(iop, r.Defaults)
	if err != nil {
		r.set(iop, metav1.ConditionFalse, controller.Stuck, ReasonInvalidSpec, err.Error())
		return reconcile.Result{}, nil
	}
	d := &appsv1.Deployment{}
	err = r.Client.Get(ctx, install.OperatorDeployment(iop.Name, cfg.Namespace), d)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err
	}
	if err != nil || !r.converged.recent(iop, r.Clock.Now()) {
		installer := install.FleetInstaller(r.Direct, io.Discard)
		if err := installer.Converge(ctx, cfg); err != nil {
			progress := controller.InProgress
			if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
				progress = controller.Stuck
			}
			r.set(iop, metav1.ConditionFalse, progress, ReasonApplyFailed, err.Error())
			return reconcile.Result{}, err
		}
		r.converged.mark(iop, r.Clock.Now())
		if err := r.Client.Get(ctx, install.OperatorDeployment(iop.Name, cfg.Namespace), d); err != nil {
			return reconcile.Result{}, err
		}
	}
	rollout, err := install.Rollout(d)
	if err != nil {
		return reconcile.Result{}, err
	}
	switch rollout.Status {
	case status.CurrentStatus:
	case status.FailedStatus:
		r.set(iop, metav1.ConditionFalse, controller.Stuck, ReasonRolloutFailed, "the operator's Deployment failed: "+rollout.Message)
		return reconcile.Result{}, nil
	default:
		r.set(iop, metav1.ConditionFalse, controller.InProgress, ReasonRollingOut, "the operator's Deployment rolls out: "+rollout.Message)
		return reconcile.Result{}, nil
	}
	if waiting := awaitingRegistration(iop, cfg, r.Clock.Now()); waiting != "" {
		r.set(iop, metav1.ConditionFalse, controller.InProgress, ReasonAwaitingRegistration, waiting)
		return reconcile.Result{RequeueAfter: awaitEvery}, nil
	}
	r.set(iop, metav1.ConditionTrue, controller.Current, ReasonRolledOut, fmt.Sprintf(
		"operator %s %s runs in namespace %s from %s", iop.Name, iop.Status.Version, cfg.Namespace, cfg.Image))
	return reconcile.Result{}, nil
}

// awaitingRegistration says what the registration still lacks for the
// roll-out of cfg to be done, "" when nothing.
func awaitingRegistration(iop *camelv1alpha1.IntegrationOperator, cfg install.Config, now time.Time) string {
	switch {
	case iop.Status.Namespace != cfg.Namespace || !ownership.FromOperator(iop).Live(now):
		return "the Deployment rolled out; waiting for the operator to register"
	case cfg.Version != "" && iop.Status.Version != cfg.Version:
		return fmt.Sprintf("the registered operator is version %s; waiting for %s", iop.Status.Version, cfg.Version)
	}
	return ""
}

// set records the roll-out in the fleet's conditions: Deployed, and
// Reconciling or Stalled by progress. Ready is the operator's own.
func (r *Reconciler) set(iop *camelv1alpha1.IntegrationOperator, deployed metav1.ConditionStatus, progress controller.Progress, reason controller.Reason, message string) {
	controller.SetProgressOf(&iop.Status.Conditions, camelv1alpha1.ConditionDeployed, iop.Generation, deployed, progress, reason, message)
}

// remove takes the declared operator down with all its objects, says in an
// Event how many resources it leaves as orphans, and lets the deletion end.
func (r *Reconciler) remove(ctx context.Context, iop *camelv1alpha1.IntegrationOperator) error {
	if !controllerutil.ContainsFinalizer(iop, Finalizer) {
		return nil
	}
	if iop.Spec.Namespace != "" {
		installer := install.FleetInstaller(r.Direct, io.Discard)
		if err := installer.Uninstall(ctx, iop.Name, iop.Spec.Namespace, false); err != nil {
			return fmt.Errorf("removing operator %s: %w", iop.Name, err)
		}
		left, err := r.orphans(ctx, iop.Name)
		if err != nil {
			return err
		}
		msg := fmt.Sprintf("operator %s removed from namespace %s", iop.Name, iop.Spec.Namespace)
		if left != "" {
			msg += "; it leaves " + left + " as orphans until they are assigned to another operator (caravan reassign --from " + iop.Name + ")"
		}
		controller.Event(r.Recorder, iop, nil, corev1.EventTypeNormal, string(ReasonRemoved), "Remove", msg)
		log.FromContext(ctx).Info(msg)
	}
	patch := client.MergeFromWithOptions(iop.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(iop, Finalizer)
	return client.IgnoreNotFound(r.Client.Patch(ctx, iop, patch))
}

// orphaned are the kinds counted as left behind by a removed operator.
var orphaned = []schema.GroupVersionKind{
	camelv1.GroupVersion.WithKind("Integration"),
	camelv1.GroupVersion.WithKind("Pipe"),
	camelv1alpha1.GroupVersion.WithKind("KameletBinding"),
}

// orphans counts the resources still assigned to operator id, by kind,
// as "3 Integrations, 1 Pipe"; "" when none.
func (r *Reconciler) orphans(ctx context.Context, id string) (string, error) {
	var parts []string
	for _, gvk := range orphaned {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := r.Direct.List(ctx, list, client.MatchingLabels{camelv1.OperatorIDLabel: id}); err != nil {
			return "", fmt.Errorf("counting the %ss operator %s leaves: %w", gvk.Kind, id, err)
		}
		if n := len(list.Items); n > 0 {
			plural := gvk.Kind
			if n > 1 {
				plural += "s"
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, plural))
		}
	}
	return strings.Join(parts, ", "), nil
}
