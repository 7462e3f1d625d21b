// Package integrationkit reconciles the IntegrationKits an operator owns.
// An external kit (spec.image set) is Ready as soon as it is seen; kits
// that need a build wait for the build runner.
package integrationkit

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// Reconciler reconciles IntegrationKits.
type Reconciler struct {
	Client     client.Client
	OperatorID string
}

// +kubebuilder:rbac:groups=camel.apache.org,resources=integrationkits,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=camel.apache.org,resources=integrationkits/status,verbs=get;update;patch

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, wrap func(string, reconcile.Reconciler) reconcile.Reconciler) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("integrationkit").
		For(&camelv1.IntegrationKit{}).
		Complete(wrap("IntegrationKit", r))
}

// Reconcile computes the kit's status from what it observes.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	kit := &camelv1.IntegrationKit{}
	if err := r.Client.Get(ctx, req.NamespacedName, kit); err != nil {
		// Gone from this operator's cache: deleted, or moved to another
		// operator. Neither asks for any cleanup here.
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !ownership.Owns(kit.Annotations, r.OperatorID) {
		return reconcile.Result{}, nil
	}
	before := kit.DeepCopy()
	computeStatus(kit)
	if equality.Semantic.DeepEqual(before.Status, kit.Status) {
		return reconcile.Result{}, nil
	}
	patch := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
	if err := r.Client.Status().Patch(ctx, kit, patch); err != nil {
		return reconcile.Result{}, fmt.Errorf("patching kit status: %w", err)
	}
	return reconcile.Result{}, nil
}

func computeStatus(kit *camelv1.IntegrationKit) {
	kit.Status.ObservedGeneration = kit.Generation
	if kit.Spec.Image != "" {
		kit.Status.Phase = camelv1.IntegrationKitPhaseReady
		kit.Status.Image = kit.Spec.Image
		kit.Status.SetCondition(metav1.Condition{
			Type: camelv1.ConditionReady, Status: metav1.ConditionTrue, Reason: "ExternalImage",
			Message: "the kit runs the pre-built image " + kit.Spec.Image, ObservedGeneration: kit.Generation,
		})
		return
	}
	kit.Status.Phase = camelv1.IntegrationKitPhaseBuildSubmitted
	kit.Status.SetCondition(metav1.Condition{
		Type: camelv1.ConditionReady, Status: metav1.ConditionFalse, Reason: "WaitingForBuild",
		Message: "the kit has no image yet and waits for its build", ObservedGeneration: kit.Generation,
	})
}
