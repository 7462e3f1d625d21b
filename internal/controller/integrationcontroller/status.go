package integrationcontroller

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/metrics"
	"github.com/caravan-dev/caravan/internal/trait"
)

// computeStatus derives the phase and conditions from what the steps observed.
// The phase is a label for the user; no step reads the operator's own phase, only a client's
// deploy or undeploy request written over it (see requestOf).
func computeStatus(s *scope) {
	st := &s.it.Status
	st.ObservedGeneration = s.it.Generation
	st.Selector = labels.SelectorFromSet(labels.Set{camelv1.IntegrationLabel: s.it.Name}).String()
	if s.image != "" {
		st.Image = s.image
	}
	ready, progress := readiness(s)
	if s.notDeployed {
		st.Replicas = nil
	}
	if s.deployment != nil && ready.Status == metav1.ConditionTrue {
		// Counted once rolled out: the count of a rollout in progress
		// changes from one pod to the next, and each change would cost
		// a status write.
		replicas := s.deployment.Status.Replicas
		st.Replicas = &replicas
	}
	st.Phase = phase(s, ready)
	controller.SetProgress(&st.Conditions, s.it.Generation, ready.Status, progress, controller.Reason(ready.Reason), ready.Message)
	// The owner reconciles it: it is no orphan.
	meta.RemoveStatusCondition(&st.Conditions, camelv1.ConditionOperatorAvailable)
	setTraitsIgnored(s)
	setKameletsAvailable(s)
	setCronJobAvailable(s)
}

// cronJobAvailable is the CronJobAvailable condition, as Camel K sets it: true when the integration
// runs as the CronJob cron, false when its cron: consumers fall back to a Deployment; nil otherwise.
func cronJobAvailable(t trait.Cron, cron *batchv1.CronJob) *metav1.Condition {
	switch {
	case cron != nil:
		msg := "the CronJob " + cron.Name + " runs the integration"
		if _, overrides, _ := t.CronJob(); len(overrides) > 0 {
			msg += fmt.Sprintf("; its pods run %s in place of %s, once per job", trait.OneShotURI, strings.Join(overrides, ", "))
		}
		c := controller.Cond(metav1.ConditionTrue, ReasonCronJobAvailable, msg)
		return &c
	case t.Fallback():
		c := controller.Cond(metav1.ConditionFalse, ReasonCronJobNotAvailable,
			"fallback strategy selected: the cron consumers run in a Deployment, on the quartz component")
		return &c
	}
	return nil
}

// setCronJobAvailable sets or removes the CronJobAvailable condition as reconcileDeployment found
// it; a reconcile that stopped before leaves it as it was.
func setCronJobAvailable(s *scope) {
	st := &s.it.Status
	switch {
	case s.cronJobAvailable != nil:
		c := *s.cronJobAvailable
		c.Type, c.ObservedGeneration = camelv1.ConditionCronJobAvailable, s.it.Generation
		meta.SetStatusCondition(&st.Conditions, c)
	case s.cronRead:
		meta.RemoveStatusCondition(&st.Conditions, camelv1.ConditionCronJobAvailable)
	}
}

// setTraitsIgnored sets the TraitsIgnored condition while the integration
// sets traits Caravan does not act on, and removes it once it sets none.
// A reconcile that stopped before reading the traits leaves it as it was.
func setTraitsIgnored(s *scope) {
	st := &s.it.Status
	switch {
	case s.traitsIgnored != "":
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: camelv1.ConditionTraitsIgnored, Status: metav1.ConditionTrue,
			Reason: string(s.traitsIgnoredReason), Message: s.traitsIgnored, ObservedGeneration: s.it.Generation})
	case s.traitsChecked:
		meta.RemoveStatusCondition(&st.Conditions, camelv1.ConditionTraitsIgnored)
	}
}

// readiness returns the Ready condition and where the integration stands:
// stuck on bad input, current once rolled out, else in progress.
func readiness(s *scope) (ready metav1.Condition, progress controller.Progress) {
	switch {
	case s.Failure != nil:
		return controller.Cond(metav1.ConditionFalse, s.Failure.Reason, s.Failure.Message), controller.Stuck
	case s.Waiting != nil:
		ready = controller.Cond(metav1.ConditionFalse, s.Waiting.Reason, s.Waiting.Message)
	case s.notDeployed:
		// As done as it gets until a client asks for a deploy.
		return controller.Cond(metav1.ConditionFalse, ReasonBuildComplete, buildComplete(s.it.Name)), controller.Current
	case s.cronJob != nil:
		return cronJobReadiness(s.cronJob)
	case s.deployment == nil && s.failing != nil:
		ready = controller.Cond(metav1.ConditionFalse, ReasonRetrying,
			fmt.Sprintf("%v; retrying since %s", s.failing, s.failingSince.UTC().Format(time.RFC3339)))
	case s.deployment == nil:
		ready = controller.Cond(metav1.ConditionFalse, ReasonDeploying, "the Deployment is being applied")
	default:
		ok, msg := deploymentReady(s.deployment)
		switch {
		case ok:
			return controller.Cond(metav1.ConditionTrue, ReasonDeploymentReady, msg), controller.Current
		case s.unmounted != nil:
			ready = controller.Cond(metav1.ConditionFalse, s.unmounted.Reason, msg+"; "+s.unmounted.Message)
		default:
			ready = controller.Cond(metav1.ConditionFalse, ReasonDeploymentNotReady, msg)
		}
	}
	return ready, controller.InProgress
}

// cronJobReadiness is the Ready condition of an integration that runs as a CronJob, as Camel K
// tells it: ready once made, while a job runs and after a job succeeded; stuck when the last job
// failed, until one succeeds.
func cronJobReadiness(cj *batchv1.CronJob) (metav1.Condition, controller.Progress) {
	st := cj.Status
	switch {
	case len(st.Active) > 0:
		return controller.Cond(metav1.ConditionTrue, ReasonCronJobActive, fmt.Sprintf("the CronJob %s runs a job", cj.Name)), controller.Current
	case st.LastScheduleTime == nil:
		return controller.Cond(metav1.ConditionTrue, ReasonCronJobCreated,
			fmt.Sprintf("the CronJob %s waits for its schedule %q", cj.Name, cj.Spec.Schedule)), controller.Current
	case st.LastSuccessfulTime != nil && !st.LastSuccessfulTime.Before(st.LastScheduleTime):
		return controller.Cond(metav1.ConditionTrue, ReasonLastJobSucceeded, fmt.Sprintf("the last job of the CronJob %s, scheduled at %s, succeeded",
			cj.Name, st.LastScheduleTime.UTC().Format(time.RFC3339))), controller.Current
	}
	return controller.Cond(metav1.ConditionFalse, ReasonLastJobFailed, fmt.Sprintf(
		"the last job of the CronJob %s, scheduled at %s, failed: kubectl get jobs -l %s=%s; caravan logs %s",
		cj.Name, st.LastScheduleTime.UTC().Format(time.RFC3339), camelv1.IntegrationLabel, cj.Name, cj.Name)), controller.Stuck
}

// deploymentReady tells whether the Deployment has rolled out its latest
// template and all its pods are ready.
func deploymentReady(d *appsv1.Deployment) (bool, string) {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	// The message while rolling out stays the same from one pod to the
	// next, so that progress does not cost a status write per pod.
	if st.ObservedGeneration < d.Generation ||
		st.UpdatedReplicas < want || st.ReadyReplicas < want || st.AvailableReplicas < want || st.Replicas > want {
		return false, rollingOut(want)
	}
	return true, fmt.Sprintf("%d/%d pods ready, %d updated", st.ReadyReplicas, want, st.UpdatedReplicas)
}

// rollingOut is the message of a Deployment of replicas pods that has not
// rolled out yet.
func rollingOut(replicas int32) string {
	return fmt.Sprintf("rolling out: waiting for %d updated and ready pods", replicas)
}

// phase is the integration's phase. A reconcile that (re)initialises the
// integration and applies its Deployment shows Deploying, as the next
// reconcile, which sees the Deployment, does.
func phase(s *scope, ready metav1.Condition) camelv1.IntegrationPhase {
	switch {
	case s.Failure != nil, ready.Reason == string(ReasonLastJobFailed):
		return camelv1.IntegrationPhaseError
	case s.Waiting != nil && awaitsKit[s.Waiting.Reason]:
		return camelv1.IntegrationPhaseBuildingKit
	case s.notDeployed:
		return camelv1.IntegrationPhaseBuildComplete
	case ready.Status == metav1.ConditionTrue:
		return camelv1.IntegrationPhaseRunning
	case s.Waiting != nil:
		return camelv1.IntegrationPhaseInitialization
	default:
		return camelv1.IntegrationPhaseDeploying
	}
}

// transient phases pass on their own within a reconcile or two, and get no Event. The status shows
// them; an Event for each would double the writes of reaching Running.
func transient(p camelv1.IntegrationPhase) bool {
	return p == camelv1.IntegrationPhaseInitialization || p == camelv1.IntegrationPhaseDeploying
}

// recordTransition emits an Event when another operator's integration was
// adopted and when the phase changed, and observes the time to first
// readiness.
func (r *Reconciler) recordTransition(before, after *camelv1.Integration) {
	prev, cur := before.Status.Ownership, after.Status.Ownership
	switch {
	case prev.Owner == "" || prev.Owner == cur.Owner:
		// Not an adoption from another operator.
	case prev.ReleasedAt != nil:
		r.Metrics.Adopted(metrics.AfterRelease)
		controller.Event(r.Recorder, after, nil, corev1.EventTypeNormal, "Adopted", "Adopt",
			fmt.Sprintf("Integration %s adopted by operator %s from operator %s (epoch %d)", after.Name, cur.Owner, prev.Owner, cur.Epoch))
	default:
		// A takeover: the previous owner is gone, it released nothing.
		r.Metrics.Adopted(metrics.AfterExpiry)
		controller.Event(r.Recorder, after, nil, corev1.EventTypeWarning, "Adopted", "Adopt",
			fmt.Sprintf("Integration %s adopted by operator %s from operator %s, whose registration expired without a release (epoch %d)",
				after.Name, cur.Owner, prev.Owner, cur.Epoch))
	}
	if before.Status.Phase == after.Status.Phase || transient(after.Status.Phase) {
		return
	}
	controller.PhaseEvent(r.Recorder, after, nil, "Integration", "Reconcile", string(after.Status.Phase),
		after.Status.Phase == camelv1.IntegrationPhaseError, after.Status.Conditions)
	if after.Status.Phase == camelv1.IntegrationPhaseRunning && after.Status.Ownership.Epoch <= 1 {
		// Once per integration and process: a later restart of its pods
		// is not a first readiness.
		if _, seen := r.firstReady.LoadOrStore(after.UID, struct{}{}); !seen {
			r.Metrics.ObserveFirstReadiness(r.Clock.Since(after.CreationTimestamp.Time))
		}
	}
}
