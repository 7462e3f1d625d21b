// Package orphancontroller marks orphans: resources whose operator is not registered, not live, or
// does not serve their namespace. They get the condition OperatorAvailable=False saying why. The
// default operator does it (one operator, so each orphan is marked once); the owner clears the
// condition when it reconciles the resource again, and this controller clears the ones it marked
// when their operator comes back.
//
// It works per operator id: registrations change (heartbeats) and resources are assigned, and each
// id's resources are judged at once from the metadata cache, which the default operator keeps for
// adoption.
package orphancontroller

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// assignedIndex indexes metadata by the operator id they are assigned to.
const assignedIndex = "caravan.assigned"

// Kinds are the kinds whose orphans are marked.
var Kinds = []schema.GroupVersionKind{
	camelv1.GroupVersion.WithKind("Integration"),
	camelv1.GroupVersion.WithKind("Pipe"),
	camelv1alpha1.GroupVersion.WithKind("KameletBinding"),
}

// Reconciler judges the resources of one operator id per request (the
// request's name is the id).
type Reconciler struct {
	// Meta is the metadata cache of every resource of Kinds, which also
	// watches every registration.
	Meta cache.Cache
	// Client writes status; APIReader reads the resource to update.
	Client    client.Client
	APIReader client.Reader
	IsDefault func() bool
	Clock     clock.PassiveClock

	mu sync.Mutex
	// marked holds, per resource UID, the reason it was marked with.
	marked map[types.UID]string
}

// +kubebuilder:rbac:groups=camel.apache.org,resources=integrations/status;pipes/status;kameletbindings/status,verbs=get;update;patch

// SetupWithManager indexes the metadata cache by assignment, and watches registrations and assignments on it.
// Of the operators, only one that runs the cluster duties watches every registration.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, wrap controller.Wrap) error {
	r.marked = map[types.UID]string{}
	metaCache := r.Meta
	// One worker: a reconcile judges all of one operator's resources, and operators are few.
	b := ctrl.NewControllerManagedBy(mgr).Named("orphan").
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: 1}).
		WatchesRawSource(source.Kind(metaCache, &camelv1alpha1.IntegrationOperator{},
			&handler.TypedEnqueueRequestForObject[*camelv1alpha1.IntegrationOperator]{}))
	for _, gvk := range Kinds {
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(gvk)
		err := metaCache.IndexField(ctx, obj, assignedIndex, func(o client.Object) []string {
			if id := ownership.AssignedID(o.GetAnnotations()); id != "" {
				return []string{id}
			}
			return nil
		})
		if err != nil {
			return err
		}
		b = b.WatchesRawSource(source.Kind(metaCache, obj, handler.TypedEnqueueRequestsFromMapFunc(
			func(_ context.Context, o *metav1.PartialObjectMetadata) []reconcile.Request {
				if id := ownership.AssignedID(o.Annotations); id != "" {
					return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: id}}}
				}
				return nil
			})))
	}
	return b.Complete(wrap("Orphan", r))
}

// Reconcile judges every resource assigned to the operator id req.Name.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if !r.IsDefault() {
		return reconcile.Result{}, nil
	}
	id := req.Name
	iop := &camelv1alpha1.IntegrationOperator{}
	if err := r.Meta.Get(ctx, client.ObjectKey{Name: id}, iop); apierrors.IsNotFound(err) {
		iop = nil
	} else if err != nil {
		return reconcile.Result{}, err
	}
	now := r.Clock.Now()
	for _, gvk := range Kinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := r.Meta.List(ctx, list, client.MatchingFields{assignedIndex: id}, client.UnsafeDisableDeepCopy); err != nil {
			return reconcile.Result{}, err
		}
		for i := range list.Items {
			o := &list.Items[i]
			reason, message := ownership.Orphaned(id, o.Namespace, iop, now)
			if err := r.judge(ctx, gvk, o, reason, message); err != nil {
				return reconcile.Result{}, err
			}
		}
	}
	if iop != nil {
		// Look again when the heartbeat would go stale.
		reg := ownership.FromOperator(iop)
		stale := reg.StaleAfter
		if stale <= 0 {
			stale = ownership.DefaultStaleAfter
		}
		if wait := reg.Heartbeat.Add(stale + time.Second).Sub(now); wait > 0 {
			return reconcile.Result{RequeueAfter: wait}, nil
		}
	}
	return reconcile.Result{}, nil
}

// judge marks an orphan, or clears a mark this controller set.
func (r *Reconciler) judge(ctx context.Context, gvk schema.GroupVersionKind, o *metav1.PartialObjectMetadata, reason, message string) error {
	r.mu.Lock()
	prev, wasMarked := r.marked[o.UID]
	r.mu.Unlock()
	if reason == prev {
		return nil // marked already, or not an orphan and not marked
	}
	if reason == "" && !wasMarked {
		return nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(o), u); err != nil {
		return client.IgnoreNotFound(err)
	}
	conditions, err := readConditions(u)
	if err != nil {
		return err
	}
	changed := false
	if reason == "" {
		changed = meta.RemoveStatusCondition(&conditions, camelv1.ConditionOperatorAvailable)
	} else {
		changed = meta.SetStatusCondition(&conditions, metav1.Condition{Type: camelv1.ConditionOperatorAvailable,
			Status: metav1.ConditionFalse, Reason: reason, Message: message, ObservedGeneration: u.GetGeneration()})
	}
	if changed {
		if err := writeConditions(u, conditions); err != nil {
			return err
		}
		if err := r.Client.Status().Update(ctx, u); err != nil {
			return client.IgnoreNotFound(fmt.Errorf("marking %s %s: %w", gvk.Kind, o.Name, err))
		}
	}
	r.mu.Lock()
	if reason == "" {
		delete(r.marked, o.UID)
	} else {
		r.marked[o.UID] = reason
	}
	r.mu.Unlock()
	return nil
}

func readConditions(u *unstructured.Unstructured) ([]metav1.Condition, error) {
	raw, found, err := unstructured.NestedSlice(u.Object, "status", "conditions")
	if err != nil || !found {
		return nil, err
	}
	list := &struct {
		Items []metav1.Condition `json:"items"`
	}{}
	if err := fromUnstructured(map[string]any{"items": raw}, list); err != nil {
		return nil, err
	}
	return list.Items, nil
}

func writeConditions(u *unstructured.Unstructured, conditions []metav1.Condition) error {
	items := make([]any, 0, len(conditions))
	for _, c := range conditions {
		m, err := toUnstructured(&c)
		if err != nil {
			return err
		}
		items = append(items, m)
	}
	return unstructured.SetNestedSlice(u.Object, items, "status", "conditions")
}

func fromUnstructured(m map[string]any, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(m, into)
}

func toUnstructured(obj any) (map[string]any, error) {
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}
