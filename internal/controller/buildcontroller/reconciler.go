// Package buildcontroller reconciles the Builds an operator owns by running their attempts on the
// operator's build runner. It submits each attempt, records what the runner observed, and retries
// failures with exponential backoff, at most build.MaxAttempts times.
package buildcontroller

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/kit"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/internal/platform"
)

// Timing of the waits that no watch ends.
const (
	// platformRetry is how soon a build that waits for the operator's platform looks again.
	platformRetry = 5 * time.Second
	// registryRetry is how soon a build that waits for usable registry settings looks again:
	// the registry Secret is not watched.
	registryRetry = 30 * time.Second
)

// Reconciler reconciles Builds.
type Reconciler struct {
	Client client.Client
	// APIReader reads the registry Secret, which is not cached (an
	// operator never watches Secrets).
	APIReader  client.Reader
	OperatorID string
	// Namespace is the operator's: its platform and registry Secret live there.
	Namespace string
	Runner    *build.Runner
	// Events receives a Build's key when its job starts or ends.
	Events      chan event.GenericEvent
	Recorder    events.EventRecorder
	Clock       clock.PassiveClock
	BackoffBase time.Duration
}

// +kubebuilder:rbac:groups=camel.apache.org,resources=builds,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=camel.apache.org,resources=builds/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups=camel.apache.org,resources=integrationkits,verbs=get;list;watch

// SetupWithManager registers the controller: Build events, and the runner's notifications.
func (r *Reconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager, wrap controller.Wrap) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("build").
		For(&camelv1.Build{}).
		WatchesRawSource(source.Channel(r.Events, &handler.EnqueueRequestForObject{})).
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: controller.Workers}).
		Complete(wrap("Build", r))
}

// scope holds what the steps of one reconcile share.
type scope struct {
	// b is the Build as read; computeStatus updates its status.
	b *camelv1.Build
	// now is when the reconcile started: the time of a failure it records.
	now time.Time
	// job is set by reconcileAttempt or reconcileSubmission: what the runner says of the current attempt.
	job *build.Status
	// spec is set by reconcileSpec: the kit spec to build.
	spec kit.Spec
	// settings is set by reconcilePlatform: the platform's, defaults filled in.
	settings camelv1.IntegrationPlatformSpec
	// config is set by reconcilePlatform: how and where builds run.
	config platform.BuildConfiguration
	// maven is set by reconcilePlatform: Maven's settings.
	maven platform.Maven
	// mavenSettings is set by reconcileMavenSettings: the volume of Maven's settings.xml, if the
	// platform names one.
	mavenSettings *corev1.VolumeSource
	// mavenCA is set by reconcileMavenCA: the volume of the certificates Maven trusts besides
	// the public ones, if the platform names some.
	mavenCA *corev1.VolumeSource
	// parent is set by reconcileParent: the Ready kit to build on, if any.
	parent *build.Parent
	// registry is set by reconcileRegistry: where the image goes, with its credentials.
	registry image.Registry
	// registrySecret is set by reconcileRegistry: the key of the Secret the credentials come from, if any.
	registrySecret *corev1.SecretKeySelector
	// registryCA is set by reconcileRegistry: the registry's CA certificates as a volume, if any.
	registryCA *corev1.VolumeSource
	// Outcome is set by a step that waits for the platform's settings, found the build invalid, or
	// found the runner's attempt. Those are a Waiting, a Failure, and Done.
	controller.Outcome
}

// Reconcile reconciles one object; a lost optimistic-lock race is retried
// quietly.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return controller.RequeueOnConflict(r.reconcile(ctx, req))
}

// reconcile runs the steps in order; the status is computed from what
// they observed and written once, at the end.
func (r *Reconciler) reconcile(ctx context.Context, req reconcile.Request) (result reconcile.Result, retErr error) {
	b := &camelv1.Build{}
	if err := r.Client.Get(ctx, req.NamespacedName, b); err != nil {
		if apierrors.IsNotFound(err) {
			// Deleted (its kit went): stop the build.
			r.Runner.Cancel(req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !b.DeletionTimestamp.IsZero() {
		r.Runner.Cancel(req.NamespacedName)
		return reconcile.Result{}, nil
	}
	if !ownership.Owns(b.Annotations, r.OperatorID) {
		r.Runner.Cancel(req.NamespacedName)
		return reconcile.Result{}, nil
	}
	if finished(b) {
		return reconcile.Result{}, nil
	}
	before := b.DeepCopy()
	s := &scope{b: b, now: r.Clock.Now()}
	defer func() {
		if err := r.patchStatus(ctx, before, s); err != nil {
			// The status must land: a failed write is retried, even
			// when the steps ended in a terminal error.
			retErr = err
		}
	}()
	steps := []controller.Step[*scope]{
		// First: an attempt the runner has needs nothing of the steps after.
		r.reconcileAttempt,
		r.reconcileBackoff,
		r.reconcileSpec,
		r.reconcilePlatform,
		r.reconcileRegistry,
		r.reconcileMavenSettings,
		r.reconcileMavenCA,
		r.reconcileParent,
		// Last: it hands the attempt, with all the above resolved, to the runner.
		r.reconcileSubmission,
	}
	return controller.RunSteps(ctx, s, &s.Outcome, steps...)
}

// finished tells whether the build is over, Succeeded or in Error: nothing retries it.
//
// The Build's phase is an input here, unlike other kinds' phases: the runner keeps an attempt
// in memory only until its outcome is recorded (and loses it when the operator restarts), so
// the status is the only record of the attempts made.
func finished(b *camelv1.Build) bool {
	return b.Status.Phase == camelv1.BuildPhaseSucceeded || b.Status.Phase == camelv1.BuildPhaseError
}

// patchStatus computes the status and writes it when it changed, with a precondition on the
// resourceVersion read. A new phase is told in an Event, and a recorded outcome is dropped from the
// runner.
func (r *Reconciler) patchStatus(ctx context.Context, before *camelv1.Build, s *scope) error {
	computeStatus(s)
	b := s.b
	wrote, err := controller.PatchStatus(ctx, r.Client, before, b, before.Status, b.Status)
	if !wrote {
		return err
	}
	if before.Status.Phase != b.Status.Phase {
		r.recordTransition(b)
	}
	if b.Status.Phase == camelv1.BuildPhaseSucceeded || b.Status.Phase == camelv1.BuildPhaseFailed || b.Status.Phase == camelv1.BuildPhaseError {
		// The outcome is recorded: the runner can drop it.
		r.Runner.Forget(client.ObjectKeyFromObject(b), attemptOf(b))
	}
	return nil
}

// recordTransition emits an Event for the build's new phase, a Warning when an attempt failed.
func (r *Reconciler) recordTransition(b *camelv1.Build) {
	kind := corev1.EventTypeNormal
	if b.Status.Phase == camelv1.BuildPhaseFailed || b.Status.Phase == camelv1.BuildPhaseError {
		kind = corev1.EventTypeWarning
	}
	c := b.Status.GetCondition(camelv1.ConditionReady)
	controller.Event(r.Recorder, b, nil, kind, "BuildPhaseUpdated", "Build",
		fmt.Sprintf("Build %s in phase %q: %s", b.Name, b.Status.Phase, c.Message))
}
