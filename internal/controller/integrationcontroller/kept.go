package integrationcontroller

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/render"
)

// An integration that an operator other than Caravan's ran (Camel K's) moves to a Caravan operator
// by its annotation alone: that operator speaks no handover protocol, and stops acting on the
// integration as soon as the annotation no longer names it. The new owner keeps the Deployment
// that operator made, pods and all, as that operator made it (docs/architecture.md, Handover),
// until the integration's spec changes; then it replaces it with its own, in a rolling update.

// foreignDeployment returns the integration's Deployment, as reader has it, when an operator
// other than Caravan's made it: the integration controls it, and Caravan did not apply it
// (render.Applied). It returns nil otherwise.
func foreignDeployment(ctx context.Context, reader client.Reader, it *camelv1.Integration) (*appsv1.Deployment, error) {
	d := &appsv1.Deployment{}
	err := reader.Get(ctx, client.ObjectKeyFromObject(it), d)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !metav1.IsControlledBy(d, it) || render.Applied(d) {
		return nil, nil
	}
	return d, nil
}

// keepForeignDeployment records, on the adoption of an integration that ran, that a Deployment
// another operator made runs it. When the integration's spec did not change since that operator
// deployed it, this operator runs that Deployment as it is; what that operator wrote in the status
// stays while it does (its digest, its kit, its conditions): moved back, that operator finds the
// integration as it left it, and changes no pod either. Otherwise (Generation 0) this operator
// replaces it with its own (see reconcileKept).
func (r *Reconciler) keepForeignDeployment(ctx context.Context, s *scope) error {
	if s.it.Status.Phase == "" {
		return nil // it never ran: there is nothing to keep
	}
	d, err := foreignDeployment(ctx, r.APIReader, s.it)
	if err != nil || d == nil {
		return err
	}
	kept := &camelv1.KeptWorkload{
		From:  d.Annotations[camelv1.OperatorIDAnnotation],
		Image: podImage(d),
		Since: metav1.Time{Time: r.Clock.Now()},
	}
	if s.it.Status.ObservedGeneration == s.it.Generation {
		kept.Generation = s.it.Generation
	}
	s.it.Status.Ownership.Kept = kept
	ctrl.LoggerFrom(ctx).Info("Taking over the Deployment another operator made", "from", kept.From, "image", kept.Image,
		"keptAsItIs", kept.Generation != 0)
	return nil
}

// dropForeignStatus clears what the operator that made a kept Deployment wrote in the status:
// this operator's steps write their own from now on.
func dropForeignStatus(st *camelv1.IntegrationStatus) {
	st.CamelKIntegrationStatus = camelv1.CamelKIntegrationStatus{}
	st.Conditions = nil
	st.IntegrationKit = nil
	st.Digest = ""
}

// podImage is the image of the first container of d's pods.
func podImage(d *appsv1.Deployment) string {
	if cs := d.Spec.Template.Spec.Containers; len(cs) > 0 {
		return cs[0].Image
	}
	return ""
}

// reconcileKept labels a kept Deployment with this operator's id, which changes no pod, and runs
// it as it is: the status follows its rollout. Once the integration's spec changed, or the
// Deployment went, the steps after it render this operator's own.
func (r *Reconciler) reconcileKept(ctx context.Context, s *scope) (reconcile.Result, error) {
	kept := s.it.Status.Ownership.Kept
	if kept == nil {
		return reconcile.Result{}, nil
	}
	// Labelled with this operator's id once taken over, it is in the cache.
	d, err := foreignDeployment(ctx, r.Client, s.it)
	if err == nil && d == nil {
		d, err = foreignDeployment(ctx, r.APIReader, s.it)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if d == nil {
		s.it.Status.Ownership.Kept = nil
		return reconcile.Result{}, nil
	}
	if err := r.takeOver(ctx, d); err != nil {
		return reconcile.Result{}, err
	}
	if kept.Generation != s.it.Generation {
		// Kept until the Deployment step replaced it: a wait before (a kit) leaves it running.
		s.replaceKept = true
		dropForeignStatus(&s.it.Status)
		return reconcile.Result{}, nil
	}
	s.deployment = d
	s.image = kept.Image
	s.Done = true
	return reconcile.Result{}, nil
}
