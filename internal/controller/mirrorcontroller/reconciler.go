// Package mirrorcontroller keeps the operator-id label equal to the annotation, and lets the
// default operator adopt. With the label camel.apache.org/operator.id equal to the annotation of
// the same key, each operator can watch its share with a server-side label selector. The default
// operator also adopts resources that name no operator.
//
// It watches metadata only, of every resource of the user-facing kinds, through a cache of its own
// whose objects are trimmed to the few fields it reads: that watch costs little memory even on a
// large cluster, and it is what makes moves work when no admission policy mirrors the label.
package mirrorcontroller

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// Kinds are the kinds whose assignment users may write (install's
// assignable resources). Children that operators create carry the label
// from the start.
var Kinds = []schema.GroupVersionKind{
	camelv1.GroupVersion.WithKind("Integration"),
	camelv1.GroupVersion.WithKind("Pipe"),
	camelv1.GroupVersion.WithKind("IntegrationKit"),
	camelv1.GroupVersion.WithKind("Build"),
	{Group: camelv1.GroupVersion.Group, Version: "v1alpha1", Kind: "KameletBinding"},
}

// releaseRetry is how soon the mirror looks again at a label whose live owner has not handed it over yet.
const releaseRetry = 2 * time.Second

// Reconciler mirrors one kind.
type Reconciler struct {
	// Client writes the label patches.
	Client client.Client
	// Reader is the trimmed metadata cache.
	Reader client.Reader
	// Registrations tells whether the previous owner of a label is live.
	Registrations controller.Liveness
	GVK           schema.GroupVersionKind
	OperatorID    string
	// IsDefault tells whether this operator currently is the default one.
	IsDefault func() bool
}

// +kubebuilder:rbac:groups=camel.apache.org,resources=integrations;pipes;integrationkits;kameletbindings,verbs=get;list;watch;patch

// NewCache returns the metadata cache the mirror reads from. It holds every resource of the kinds
// or, with unlabelledOnly, those without the operator-id label (a server-side selector), which is
// all an operator needs when the API server mirrors the label of everything written since its
// admission policy was installed.
func NewCache(mgr ctrl.Manager, namespaces map[string]cache.Config, unlabelledOnly bool) (cache.Cache, error) {
	var selector labels.Selector
	if unlabelledOnly {
		req, err := labels.NewRequirement(camelv1.OperatorIDLabel, selection.DoesNotExist, nil)
		if err != nil {
			return nil, err
		}
		selector = labels.NewSelector().Add(*req)
	}
	return cache.New(mgr.GetConfig(), cache.Options{
		DefaultLabelSelector: selector,
		DefaultNamespaces:    namespaces,
		HTTPClient:           mgr.GetHTTPClient(),
		Scheme:               mgr.GetScheme(),
		Mapper:               mgr.GetRESTMapper(),
		DefaultTransform:     Trim,
	})
}

// Trim keeps only what the mirror reads of an object's metadata: its
// identity, its labels and the operator-id annotation. Other annotations
// (kubectl's last-applied-configuration copies the whole object) go. Of
// the whole objects the cache also holds (registrations), it drops the
// managed fields.
func Trim(in any) (any, error) {
	obj, ok := in.(*metav1.PartialObjectMetadata)
	if !ok {
		return cache.TransformStripManagedFields()(in)
	}
	id, assigned := obj.Annotations[camelv1.OperatorIDAnnotation]
	obj.Annotations = nil
	if assigned {
		obj.Annotations = map[string]string{camelv1.OperatorIDAnnotation: id}
	}
	obj.ManagedFields = nil
	obj.OwnerReferences = nil
	obj.Finalizers = nil
	return obj, nil
}

// SetupMirrors starts one controller per kind on the metadata cache, each a copy of template.
// Only events that need a write reach the reconciler.
func SetupMirrors(mgr ctrl.Manager, metaCache cache.Cache, template Reconciler, name string) error {
	for _, gvk := range Kinds {
		r := template
		r.GVK = gvk
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(gvk)
		needsWrite := predicate.NewTypedPredicateFuncs(func(o *metav1.PartialObjectMetadata) bool {
			a := ownership.Decide(o.Annotations, o.Labels, r.OperatorID, r.IsDefault())
			return a == ownership.MirrorLabel || a == ownership.Adopt
		})
		src := source.Kind(metaCache, obj, &handler.TypedEnqueueRequestForObject[*metav1.PartialObjectMetadata]{}, needsWrite)
		err := ctrl.NewControllerManagedBy(mgr).
			Named(name + "-" + gvk.Kind + "-" + gvk.Version).
			WatchesRawSource(src).
			WithOptions(crcontroller.Options{MaxConcurrentReconciles: controller.Workers}).
			Complete(&r)
		if err != nil {
			return err
		}
	}
	return nil
}

// Reconcile writes the label, and when adopting the annotation, with a precondition on the
// resourceVersion read. A concurrent change of assignment is never overwritten.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(r.GVK)
	if err := r.Reader.Get(ctx, req.NamespacedName, obj); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	action := ownership.Decide(obj.Annotations, obj.Labels, r.OperatorID, r.IsDefault())
	if previous := obj.Labels[camelv1.OperatorIDLabel]; action == ownership.MirrorLabel && previous != "" {
		// A previous owner that serves the namespace hands the label over
		// itself, after it released the resource; the label of one that is
		// gone, or does not serve the namespace, is taken.
		if live, err := r.Registrations.Serves(ctx, previous, req.Namespace); err != nil || live {
			return reconcile.Result{RequeueAfter: releaseRetry}, err
		}
	}
	meta := map[string]any{"resourceVersion": obj.ResourceVersion}
	switch action {
	case ownership.MirrorLabel:
		meta["labels"] = map[string]string{camelv1.OperatorIDLabel: r.OperatorID}
	case ownership.Adopt:
		meta["labels"] = map[string]string{camelv1.OperatorIDLabel: r.OperatorID}
		meta["annotations"] = map[string]string{camelv1.OperatorIDAnnotation: r.OperatorID}
	default:
		return reconcile.Result{}, nil
	}
	data, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return reconcile.Result{}, err
	}
	err = r.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data))
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		// Changed or deleted since the cache saw it: the watch brings
		// the newer version.
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("%s %s: %s: %w", r.GVK.Kind, req.NamespacedName, action, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Assignment mirrored", "action", action.String())
	return reconcile.Result{}, nil
}
