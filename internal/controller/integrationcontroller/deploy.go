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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/render"
)

// runRequest is what a client asks of an integration that does not run
// after its build, through the phase it writes in the status.
type runRequest int

const (
	noRequest runRequest = iota
	// deployRequest: deploy the built integration.
	deployRequest
	// undeployRequest: remove its Deployment, back to Build Complete.
	undeployRequest
)

// dontRunAfterBuild tells whether the integration is built but deployed
// only on request.
func dontRunAfterBuild(it *camelv1.Integration) bool {
	return it.Annotations[camelv1.DontRunAfterBuildAnnotation] == "true"
}

// requestOf reads the request a client wrote in the phase of an
// integration that does not run after its build. The operator computes
// the phase from its Ready condition, so a phase that disagrees with that
// condition is a client's: Deploying over the Ready condition of Build
// Complete (`kamel deploy`, `caravan deploy`); Undeploying (`caravan
// undeploy`), or Initialization over a Ready condition that is True
// (`kamel undeploy` of a Running integration).
func requestOf(it *camelv1.Integration) runRequest {
	if !dontRunAfterBuild(it) {
		return noRequest
	}
	ready := meta.FindStatusCondition(it.Status.Conditions, camelv1.ConditionReady)
	switch it.Status.Phase {
	case camelv1.IntegrationPhaseDeploying:
		if ready != nil && ready.Reason == string(ReasonBuildComplete) {
			return deployRequest
		}
	case camelv1.IntegrationPhaseUndeploying:
		return undeployRequest
	case camelv1.IntegrationPhaseInitialization:
		if ready != nil && ready.Status == metav1.ConditionTrue {
			return undeployRequest
		}
	}
	return noRequest
}

// runRequested passes the status write of a client that asks for a deploy or an undeploy (see
// requestOf). The operator's own status writes cause no reconcile.
var runRequested = predicate.TypedFuncs[client.Object]{
	UpdateFunc: func(e event.TypedUpdateEvent[client.Object]) bool {
		old, okOld := e.ObjectOld.(*camelv1.Integration)
		cur, okNew := e.ObjectNew.(*camelv1.Integration)
		return okOld && okNew && old.Status.Phase != cur.Status.Phase && requestOf(cur) != noRequest
	},
}

// reconcileUndeploy removes the children of an integration whose client asked for an undeploy. It
// runs before anything else is looked at: the request is in the phase, which this reconcile's
// status write replaces.
func (r *Reconciler) reconcileUndeploy(ctx context.Context, s *scope) (reconcile.Result, error) {
	if requestOf(s.it) != undeployRequest {
		return reconcile.Result{}, nil
	}
	if err := r.removeChildren(ctx, s); err != nil {
		return reconcile.Result{}, err
	}
	s.notDeployed = true
	s.Done = true
	return reconcile.Result{}, nil
}

// removeChildren deletes the Deployment, the Service, the
// PodDisruptionBudget, the Ingress, the PodMonitor and the ConfigMap of
// the integration.
func (r *Reconciler) removeChildren(ctx context.Context, s *scope) error {
	name := s.it.Name
	if err := r.removeChild(ctx, s, name, &appsv1.Deployment{}); err != nil {
		return err
	}
	if err := r.removeChild(ctx, s, name, &corev1.Service{}); err != nil {
		return err
	}
	if err := r.removeChild(ctx, s, name, &policyv1.PodDisruptionBudget{}); err != nil {
		return err
	}
	if err := r.removeChild(ctx, s, name, &networkingv1.Ingress{}); err != nil {
		return err
	}
	if err := r.removeChild(ctx, s, name, &batchv1.CronJob{}); err != nil {
		return err
	}
	if r.PodMonitors {
		if err := r.removeChild(ctx, s, name, PodMonitorMetadata()); err != nil {
			return err
		}
	}
	return r.removeChild(ctx, s, render.ConfigMapName(name), &corev1.ConfigMap{})
}

// reconcileDeploy stops a built integration that does not run after its build at Build Complete,
// until a deploy. It has no children until a client asks for a deploy. One that has its Deployment
// was deployed: it stays so, and rolls with its spec, until it is undeployed.
func (r *Reconciler) reconcileDeploy(ctx context.Context, s *scope) (reconcile.Result, error) {
	if !dontRunAfterBuild(s.it) || requestOf(s.it) == deployRequest {
		return reconcile.Result{}, nil
	}
	if !shownBuildComplete(s.it) {
		deployed, err := r.deployed(ctx, s)
		if err != nil || deployed {
			return reconcile.Result{}, err
		}
	}
	// Built and not deployed: a Deployment left by a deploy this status
	// no longer shows goes, so that what runs is what the status says.
	if err := r.removeChildren(ctx, s); err != nil {
		return reconcile.Result{}, err
	}
	s.notDeployed = true
	s.Done = true
	return reconcile.Result{}, nil
}

// shownBuildComplete tells whether the status as read says the integration is built and not
// deployed. Then it is not deployed, whatever a cache that lags the last undeploy still holds.
func shownBuildComplete(it *camelv1.Integration) bool {
	ready := meta.FindStatusCondition(it.Status.Conditions, camelv1.ConditionReady)
	return ready != nil && ready.Reason == string(ReasonBuildComplete)
}

// deployed tells whether the integration has its Deployment. One missing
// from the cache is looked up in the API server: the cache may lag the
// deploy that created it, and after a move the Deployment may still carry
// the previous owner's id, which this operator's cache does not hold.
func (r *Reconciler) deployed(ctx context.Context, s *scope) (bool, error) {
	d := &appsv1.Deployment{}
	key := client.ObjectKeyFromObject(s.it)
	err := r.Client.Get(ctx, key, d)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, d)
	}
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the Deployment: %w", err)
	}
	return metav1.IsControlledBy(d, s.it), nil
}

// buildComplete is the message of an integration built and not deployed.
func buildComplete(name string) string {
	return fmt.Sprintf("built and not deployed, as the annotation %s=true asks: deploy it with `caravan deploy %s` or `kamel deploy %s`",
		camelv1.DontRunAfterBuildAnnotation, name, name)
}
