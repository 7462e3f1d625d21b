package kameletcontroller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/controller/mirrorcontroller"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// SetupLabelMirror mirrors the operator-id annotation of this operator's Kamelets into the label
// its cache selects on. It runs the mirror package's reconciler on the metadata cache. Unlike the
// user-facing kinds, a Kamelet without the annotation is never adopted: catalog Kamelets are shared
// and stay unassigned. As for the other kinds, the label of a live operator is handed over by that
// operator (Reconcile releases it) and taken only from an operator that is gone, as registrations
// tells.
func SetupLabelMirror(mgr ctrl.Manager, metaCache cache.Cache, direct client.Client, registrations controller.Liveness, id, name string) error {
	gvk := camelv1.GroupVersion.WithKind("Kamelet")
	never := func() bool { return false }
	r := &mirrorcontroller.Reconciler{
		Client: direct, Reader: metaCache, Registrations: registrations, GVK: gvk, OperatorID: id, IsDefault: never,
	}
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(gvk)
	needsLabel := predicate.NewTypedPredicateFuncs(func(o *metav1.PartialObjectMetadata) bool {
		return ownership.Decide(o.Annotations, o.Labels, id, false) == ownership.MirrorLabel
	})
	src := source.Kind(metaCache, obj, &handler.TypedEnqueueRequestForObject[*metav1.PartialObjectMetadata]{}, needsLabel)
	return ctrl.NewControllerManagedBy(mgr).
		Named(name + "-Kamelet-v1").
		WatchesRawSource(src).
		Complete(r)
}
