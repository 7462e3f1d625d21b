// Package buildcontroller reconciles the Builds an operator owns: it submits each
// attempt to the operator's build runner, records what the runner
// observed, and retries failures with exponential backoff, at most
// build.MaxAttempts times.
package buildcontroller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// SetupWithManager registers the controller: Build events, and the
// runner's notifications.
func (r *Reconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager, wrap controller.Wrap) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("build").
		For(&camelv1.Build{}).
		WatchesRawSource(source.Channel(r.Events, &handler.EnqueueRequestForObject{})).
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: controller.Workers}).
		Complete(wrap("Build", r))
}

// Reconcile reconciles one object; a lost optimistic-lock race is retried
// quietly.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return controller.RequeueOnConflict(r.reconcile(ctx, req))
}

// scope is what one reconcile of a Build knows: the build, and what its
// steps resolved for the attempt to submit.
type scope struct {
	b        *camelv1.Build
	spec     kit.Spec
	settings camelv1.IntegrationPlatformSpec
	registry image.Registry
	// Outcome is set by a step that waits for the platform's settings,
	// found the build invalid, or observed the attempt the runner has.
	controller.Outcome
}

// reconcile runs the steps in order; the status they set is written once,
// at the end.
func (r *Reconciler) reconcile(ctx context.Context, req reconcile.Request) (result reconcile.Result, retErr error) {
	b := &camelv1.Build{}
	if err := r.Client.Get(ctx, req.NamespacedName, b); err != nil {
		if apierrors.IsNotFound(err) {
			// Deleted (its kit went): stop the build.
			r.Runner.Cancel(req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !ownership.Owns(b.Annotations, r.OperatorID) || !b.DeletionTimestamp.IsZero() {
		r.Runner.Cancel(req.NamespacedName)
		return reconcile.Result{}, nil
	}
	if b.Status.Phase == camelv1.BuildPhaseSucceeded || b.Status.Phase == camelv1.BuildPhaseError {
		return reconcile.Result{}, nil
	}
	before := b.DeepCopy()
	s := &scope{b: b}
	defer func() {
		if err := r.patchStatus(ctx, before, s); err != nil {
			// The status must land: a failed write is retried, even
			// when the steps ended in a terminal error.
			retErr = err
		}
	}()
	return controller.RunSteps(ctx, s, &s.Outcome,
		r.observeAttempt,
		r.awaitBackoff,
		r.resolveSpec,
		r.resolvePlatform,
		r.resolveRegistry,
		r.submit,
	)
}

// attempts is the number of attempts that ended in failure.
func attempts(b *camelv1.Build) int32 {
	if b.Status.Failure == nil {
		return 0
	}
	return b.Status.Failure.Recovery.Attempt
}

// observeAttempt records what the runner says of the current attempt,
// when it has it: then there is nothing to submit.
func (r *Reconciler) observeAttempt(_ context.Context, s *scope) (reconcile.Result, error) {
	st, ok := r.Runner.Status(client.ObjectKeyFromObject(s.b))
	if !ok || st.Attempt != attempts(s.b)+1 {
		return reconcile.Result{}, nil
	}
	s.Done = true
	return r.observe(s.b, st), nil
}

// awaitBackoff waits out the backoff after a failed attempt.
func (r *Reconciler) awaitBackoff(_ context.Context, s *scope) (reconcile.Result, error) {
	if s.b.Status.Phase != camelv1.BuildPhaseFailed {
		return reconcile.Result{}, nil
	}
	wait := s.b.Status.Failure.Recovery.AttemptTime.Add(build.Backoff(r.BackoffBase, attempts(s.b))).Sub(r.Clock.Now())
	if wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	return reconcile.Result{}, nil
}

// resolveSpec reads the kit spec to build from the build's task: a build
// without one, or with one that no kit layer can hold, is bad input.
func (r *Reconciler) resolveSpec(_ context.Context, s *scope) (reconcile.Result, error) {
	spec, err := build.SpecOf(s.b)
	if err == nil {
		// A spec its layer cannot hold fails every attempt alike.
		_, err = kit.Layer(spec)
	}
	if err != nil {
		r.fail(s.b, ReasonInvalidBuild, err.Error(), true)
		s.Failure = controller.Because(ReasonInvalidBuild, err.Error())
		return reconcile.Result{}, nil
	}
	s.spec = spec
	return reconcile.Result{}, nil
}

// resolvePlatform reads the operator's platform settings, and waits for
// the platform while it is missing.
func (r *Reconciler) resolvePlatform(ctx context.Context, s *scope) (reconcile.Result, error) {
	itp := &camelv1.IntegrationPlatform{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.OperatorID}, itp); err != nil {
		r.wait(s, ReasonPlatformNotReady, "waiting for the operator's platform")
		return reconcile.Result{RequeueAfter: 5 * time.Second}, client.IgnoreNotFound(err)
	}
	s.settings = platform.Resolve(itp.Spec)
	return reconcile.Result{}, nil
}

// resolveRegistry builds the registry settings, and waits while they
// cannot work as they are: that is configuration the user must fix, not
// an attempt.
func (r *Reconciler) resolveRegistry(ctx context.Context, s *scope) (reconcile.Result, error) {
	reg, reason, msg := r.registry(ctx, s.settings.Build.Registry)
	if reason != "" {
		r.wait(s, reason, msg)
		return reconcile.Result{RequeueAfter: 30 * time.Second}, nil
	}
	s.registry = reg
	return reconcile.Result{}, nil
}

// wait puts the build in Scheduling for the reason given.
func (r *Reconciler) wait(s *scope, reason controller.Reason, message string) {
	setPhase(s.b, camelv1.BuildPhaseScheduling, metav1.ConditionFalse, reason, message)
	s.Waiting = controller.Because(reason, message)
}

// submit hands the attempt to the runner and records what it says.
func (r *Reconciler) submit(_ context.Context, s *scope) (reconcile.Result, error) {
	r.Runner.SetLimit(int(*s.settings.Build.MaxRunningBuilds))
	timeout := s.settings.Build.Timeout.Duration
	if s.b.Spec.Timeout != nil && s.b.Spec.Timeout.Duration > 0 {
		timeout = s.b.Spec.Timeout.Duration
	}
	st := r.Runner.Submit(build.Job{
		Build: client.ObjectKeyFromObject(s.b), Attempt: attempts(s.b) + 1,
		Spec: s.spec, Registry: s.registry, Timeout: timeout,
	})
	return r.observe(s.b, st), nil
}

// registry builds the registry settings, reading the credentials Secret
// named by the platform. A reason is returned when the platform's
// settings cannot work as they are.
func (r *Reconciler) registry(ctx context.Context, spec camelv1.RegistrySpec) (image.Registry, controller.Reason, string) {
	if spec.Address == "" {
		return image.Registry{}, ReasonNoRegistry, fmt.Sprintf(
			"the IntegrationPlatform %s/%s has no spec.build.registry.address: kits cannot be built until it names a registry",
			r.Namespace, r.OperatorID)
	}
	reg := image.Registry{Address: spec.Address, Insecure: spec.Insecure, Organization: spec.Organization}
	if spec.Secret == "" {
		return reg, "", ""
	}
	secret := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: spec.Secret}, secret); err != nil {
		return reg, ReasonRegistrySecretUnavailable, fmt.Sprintf("reading the registry Secret %s/%s named by the platform: %v",
			r.Namespace, spec.Secret, err)
	}
	data := secret.Data[corev1.DockerConfigJsonKey]
	if data == nil {
		data = secret.Data[corev1.DockerConfigKey]
	}
	auth, err := image.AuthFromDockerConfig(data, spec.Address)
	if err != nil {
		return reg, ReasonRegistrySecretInvalid, fmt.Sprintf("registry Secret %s/%s: %v", r.Namespace, spec.Secret, err)
	}
	reg.Auth = auth
	return reg, "", ""
}

// observe records what the runner says of the current attempt.
func (r *Reconciler) observe(b *camelv1.Build, st build.Status) reconcile.Result {
	switch st.State {
	case build.Queued:
		setPhase(b, camelv1.BuildPhasePending, metav1.ConditionFalse, ReasonQueued,
			fmt.Sprintf("attempt %d waits for a free build slot", st.Attempt))
	case build.Running:
		b.Status.StartedAt = &metav1.Time{Time: st.Started}
		setPhase(b, camelv1.BuildPhaseRunning, metav1.ConditionFalse, ReasonRunning, fmt.Sprintf("attempt %d is running", st.Attempt))
	case build.Done:
		b.Status.StartedAt = &metav1.Time{Time: st.Started}
		b.Status.Duration = st.Finished.Sub(st.Started).Round(time.Millisecond).String()
		if st.Err == nil {
			b.Status.Image, b.Status.Digest, b.Status.BaseImage = st.Result.Image, st.Result.Digest, st.Result.BaseImage
			setPhase(b, camelv1.BuildPhaseSucceeded, metav1.ConditionTrue, ReasonSucceeded, "built and pushed "+st.Result.Image)
			return reconcile.Result{}
		}
		final := st.Attempt >= build.MaxAttempts || errors.Is(st.Err, context.Canceled)
		r.fail(b, controller.Reason(image.ReasonOf(st.Err)), st.Err.Error(), final)
		b.Status.Failure.Recovery.Attempt = st.Attempt
		b.Status.Failure.Recovery.AttemptTime = metav1.Time{Time: st.Finished}
		if !final {
			return reconcile.Result{RequeueAfter: build.Backoff(r.BackoffBase, st.Attempt)}
		}
	}
	return reconcile.Result{}
}

// fail records a failure; final ones put the build in Error.
func (r *Reconciler) fail(b *camelv1.Build, reason controller.Reason, message string, final bool) {
	if reason == "" {
		reason = ReasonBuildFailed
	}
	if b.Status.Failure == nil {
		b.Status.Failure = &camelv1.Failure{}
	}
	b.Status.Failure.Reason = message
	b.Status.Failure.Time = metav1.Time{Time: r.Clock.Now()}
	b.Status.Failure.Recovery.AttemptMax = build.MaxAttempts
	if final {
		// In Error the build is Stuck: Stalled, with this reason.
		setPhase(b, camelv1.BuildPhaseError, metav1.ConditionFalse, reason, message)
		return
	}
	setPhase(b, camelv1.BuildPhaseFailed, metav1.ConditionFalse, reason,
		fmt.Sprintf("%s; retrying (attempt %d of %d failed)", message, attempts(b)+1, build.MaxAttempts))
}

func setPhase(b *camelv1.Build, phase camelv1.BuildPhase, ready metav1.ConditionStatus, reason controller.Reason, message string) {
	b.Status.Phase = phase
	b.Status.ObservedGeneration = b.Generation
	// Scheduling, queued, running, or failed and to be retried: in progress.
	progress := controller.ProgressOf(phase, camelv1.BuildPhaseSucceeded, camelv1.BuildPhaseError)
	controller.SetProgress(&b.Status.Conditions, b.Generation, ready, progress, reason, message)
}

func (r *Reconciler) patchStatus(ctx context.Context, before *camelv1.Build, s *scope) error {
	b := s.b
	wrote, err := controller.PatchStatus(ctx, r.Client, before, b, before.Status, b.Status)
	if !wrote {
		return err
	}
	if before.Status.Phase != b.Status.Phase {
		kind := corev1.EventTypeNormal
		if b.Status.Phase == camelv1.BuildPhaseFailed || b.Status.Phase == camelv1.BuildPhaseError {
			kind = corev1.EventTypeWarning
		}
		c := b.Status.GetCondition(camelv1.ConditionReady)
		r.Recorder.Eventf(b, nil, kind, "BuildPhaseUpdated", "Build", "Build %s in phase %q: %s", b.Name, b.Status.Phase, c.Message)
	}
	if b.Status.Phase == camelv1.BuildPhaseSucceeded || b.Status.Phase == camelv1.BuildPhaseFailed || b.Status.Phase == camelv1.BuildPhaseError {
		// The outcome is recorded: the runner can drop it.
		r.Runner.Forget(client.ObjectKeyFromObject(b), attemptOf(b))
	}
	return nil
}

func attemptOf(b *camelv1.Build) int32 {
	if b.Status.Failure != nil && b.Status.Phase != camelv1.BuildPhaseSucceeded {
		return b.Status.Failure.Recovery.Attempt
	}
	return attempts(b) + 1
}
