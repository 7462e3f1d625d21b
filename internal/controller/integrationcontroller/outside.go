package integrationcontroller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/internal/render"
)

// An operator that is not Caravan's (Camel K's) takes an integration over by its annotation alone,
// and labels nothing it finds: it applies its own workload and Service over what it finds by name.
// Caravan's admission policies keep it off what is labelled for a Caravan operator, so the releasing
// operator lets go of what it made for the integration (docs/architecture.md, Handover):
//   - the Deployment (or CronJob) it applied is deleted with its dependents orphaned: the
//     ReplicaSet and its pods keep running until the other operator's Deployment, of the same
//     selector, adopts them and rolls them to its own template, never below the replicas;
//   - the Service, Ingress, PodDisruptionBudget and PodMonitor are handed to the new id (annotated,
//     then labelled, as the confinement policy admits of their owner), for the other operator to
//     apply over them without a gap in what they serve;
//   - the ConfigMap stays: the running pods mount it.
// A Deployment it kept from the operator that now takes the integration back goes back as it was
// (handKeptBack).

// handOver lets go of what this operator made for an integration that moves to an operator with
// no IntegrationOperator: one that is not Caravan's. A move to a Caravan operator leaves the
// children to it.
func (r *Reconciler) handOver(ctx context.Context, it *camelv1.Integration) error {
	to := ownership.AssignedID(it.Annotations)
	if kept := it.Status.Ownership.Kept; kept != nil && kept.From != "" && kept.From == to {
		return r.handKeptBack(ctx, it, to)
	}
	if to == "" {
		return nil
	}
	err := r.APIReader.Get(ctx, client.ObjectKey{Name: to}, &camelv1alpha1.IntegrationOperator{})
	if err == nil || !apierrors.IsNotFound(err) {
		return client.IgnoreNotFound(err)
	}
	for _, workload := range []client.Object{&appsv1.Deployment{}, &batchv1.CronJob{}} {
		if err := r.orphanWorkload(ctx, it, workload); err != nil {
			return err
		}
	}
	children := []client.Object{&corev1.Service{}, &networkingv1.Ingress{}, &policyv1.PodDisruptionBudget{}}
	if r.PodMonitors {
		children = append(children, PodMonitorMetadata())
	}
	for _, child := range children {
		if err := r.handChildOver(ctx, it, child, to); err != nil {
			return err
		}
	}
	return nil
}

// ownChild reads into obj the child of the integration named like it, and tells whether this
// operator's label is on it and the integration controls it.
func (r *Reconciler) ownChild(ctx context.Context, it *camelv1.Integration, obj client.Object) (bool, error) {
	err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(it), obj)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the %T of the integration: %w", obj, err)
	}
	return obj.GetLabels()[camelv1.OperatorIDLabel] == r.OperatorID && metav1.IsControlledBy(obj, it), nil
}

// orphanWorkload deletes the integration's workload this operator applied, orphaning its pods' owner.
func (r *Reconciler) orphanWorkload(ctx context.Context, it *camelv1.Integration, workload client.Object) error {
	own, err := r.ownChild(ctx, it, workload)
	if err != nil || !own || !render.Applied(workload) {
		return err
	}
	uid, version := workload.GetUID(), workload.GetResourceVersion()
	err = r.Client.Delete(ctx, workload, client.PropagationPolicy(metav1.DeletePropagationOrphan),
		client.Preconditions{UID: &uid, ResourceVersion: &version})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil { // a conflict too: the release is tried again, and reads it again
		return fmt.Errorf("letting go of %T %s: %w", workload, workload.GetName(), err)
	}
	ctrl.LoggerFrom(ctx).Info("Let go of the workload for an operator that is not Caravan's, its pods kept",
		"kind", fmt.Sprintf("%T", workload), "to", ownership.AssignedID(it.Annotations))
	return nil
}

// handChildOver annotates the integration's child with the id to, then labels it so: the
// confinement policy admits each step of its owner (the label follows the annotation).
func (r *Reconciler) handChildOver(ctx context.Context, it *camelv1.Integration, child client.Object, to string) error {
	own, err := r.ownChild(ctx, it, child)
	if err != nil || !own {
		return err
	}
	if child.GetAnnotations()[camelv1.OperatorIDAnnotation] != to {
		if err := controller.PatchAssignment(ctx, r.Client, child, to); apierrors.IsNotFound(err) {
			return nil
		} else if err != nil {
			return fmt.Errorf("handing %T %s to operator %s: %w", child, child.GetName(), to, err)
		}
	}
	if err := controller.PatchLabel(ctx, r.Client, child, to); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("handing %T %s to operator %s: %w", child, child.GetName(), to, err)
	}
	return nil
}
