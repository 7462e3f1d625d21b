// Package build reconciles the Builds an operator owns: it submits each
// attempt to the operator's build runner, records what the runner
// observed, and retries failures with exponential backoff, at most
// build.MaxAttempts times.
package buildcontroller

import (
	"context"
	"encoding/json"
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

// TaskName is the key of Caravan's task in a Build's spec.tasks: the kit
// spec to build.
const TaskName = "caravan"

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
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, wrap func(string, reconcile.Reconciler) reconcile.Reconciler) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("build").
		For(&camelv1.Build{}).
		WatchesRawSource(source.Channel(r.Events, &handler.EnqueueRequestForObject{})).
		Complete(wrap("Build", r))
}

// Task encodes a kit spec as a Build task.
func Task(s kit.Spec) (camelv1.RawObject, error) {
	data, err := json.Marshal(map[string]kit.Spec{TaskName: s})
	if err != nil {
		return camelv1.RawObject{}, err
	}
	var raw camelv1.RawObject
	raw.Raw = data
	return raw, nil
}

func specOf(b *camelv1.Build) (kit.Spec, error) {
	for _, t := range b.Spec.Tasks {
		var task map[string]json.RawMessage
		if err := json.Unmarshal(t.Raw, &task); err != nil {
			continue
		}
		if raw, ok := task[TaskName]; ok {
			var s kit.Spec
			if err := json.Unmarshal(raw, &s); err != nil {
				return kit.Spec{}, fmt.Errorf("task %s: %w", TaskName, err)
			}
			return s, nil
		}
	}
	return kit.Spec{}, fmt.Errorf("the build has no %q task", TaskName)
}

// Reconcile reconciles one object; a lost optimistic-lock race is retried
// quietly.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return controller.RequeueOnConflict(r.reconcile(ctx, req))
}

// reconcile moves one Build along.
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
	defer func() {
		if err := r.patchStatus(ctx, before, b); err != nil {
			// The status must land: a failed write is retried, even
			// when the steps ended in a terminal error.
			retErr = err
		}
	}()
	if st, ok := r.Runner.Status(req.NamespacedName); ok && st.Attempt == attempts(b)+1 {
		return r.observe(b, st), nil
	}
	if b.Status.Phase == camelv1.BuildPhaseFailed {
		wait := b.Status.Failure.Recovery.AttemptTime.Add(build.Backoff(r.BackoffBase, attempts(b))).Sub(r.Clock.Now())
		if wait > 0 {
			return reconcile.Result{RequeueAfter: wait}, nil
		}
	}
	return r.submit(ctx, b)
}

// attempts is the number of attempts that ended in failure.
func attempts(b *camelv1.Build) int32 {
	if b.Status.Failure == nil {
		return 0
	}
	return b.Status.Failure.Recovery.Attempt
}

// submit resolves the job's inputs and hands it to the runner.
func (r *Reconciler) submit(ctx context.Context, b *camelv1.Build) (reconcile.Result, error) {
	spec, err := specOf(b)
	if err != nil {
		r.fail(b, "InvalidBuild", err.Error(), true)
		return reconcile.Result{}, nil
	}
	itp := &camelv1.IntegrationPlatform{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.OperatorID}, itp); err != nil {
		setPhase(b, camelv1.BuildPhaseScheduling, metav1.ConditionFalse, "PlatformNotReady", "waiting for the operator's platform")
		return reconcile.Result{RequeueAfter: 5 * time.Second}, client.IgnoreNotFound(err)
	}
	settings := platform.Resolve(itp.Spec)
	reg, reason, msg := r.registry(ctx, settings.Build.Registry)
	if reason != "" {
		// Waiting on configuration the user must fix; not an attempt.
		setPhase(b, camelv1.BuildPhaseScheduling, metav1.ConditionFalse, reason, msg)
		return reconcile.Result{RequeueAfter: 30 * time.Second}, nil
	}
	r.Runner.SetLimit(int(*settings.Build.MaxRunningBuilds))
	timeout := settings.Build.Timeout.Duration
	if b.Spec.Timeout != nil && b.Spec.Timeout.Duration > 0 {
		timeout = b.Spec.Timeout.Duration
	}
	st := r.Runner.Submit(build.Job{
		Build: client.ObjectKeyFromObject(b), Attempt: attempts(b) + 1,
		Spec: spec, Registry: reg, Timeout: timeout,
	})
	return r.observe(b, st), nil
}

// registry builds the registry settings, reading the credentials Secret
// named by the platform. A reason is returned when the platform's
// settings cannot work as they are.
func (r *Reconciler) registry(ctx context.Context, spec camelv1.RegistrySpec) (image.Registry, string, string) {
	if spec.Address == "" {
		return image.Registry{}, "NoRegistry", fmt.Sprintf(
			"the IntegrationPlatform %s/%s has no spec.build.registry.address: kits cannot be built until it names a registry",
			r.Namespace, r.OperatorID)
	}
	reg := image.Registry{Address: spec.Address, Insecure: spec.Insecure, Organization: spec.Organization}
	if spec.Secret == "" {
		return reg, "", ""
	}
	secret := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: spec.Secret}, secret); err != nil {
		return reg, "RegistrySecretUnavailable", fmt.Sprintf("reading the registry Secret %s/%s named by the platform: %v",
			r.Namespace, spec.Secret, err)
	}
	data := secret.Data[corev1.DockerConfigJsonKey]
	if data == nil {
		data = secret.Data[corev1.DockerConfigKey]
	}
	auth, err := image.AuthFromDockerConfig(data, spec.Address)
	if err != nil {
		return reg, "RegistrySecretInvalid", fmt.Sprintf("registry Secret %s/%s: %v", r.Namespace, spec.Secret, err)
	}
	reg.Auth = auth
	return reg, "", ""
}

// observe records what the runner says of the current attempt.
func (r *Reconciler) observe(b *camelv1.Build, st build.Status) reconcile.Result {
	switch st.State {
	case build.Queued:
		setPhase(b, camelv1.BuildPhasePending, metav1.ConditionFalse, "Queued",
			fmt.Sprintf("attempt %d waits for a free build slot", st.Attempt))
	case build.Running:
		b.Status.StartedAt = &metav1.Time{Time: st.Started}
		setPhase(b, camelv1.BuildPhaseRunning, metav1.ConditionFalse, "Running", fmt.Sprintf("attempt %d is running", st.Attempt))
	case build.Done:
		b.Status.StartedAt = &metav1.Time{Time: st.Started}
		b.Status.Duration = st.Finished.Sub(st.Started).Round(time.Millisecond).String()
		if st.Err == nil {
			b.Status.Image, b.Status.Digest, b.Status.BaseImage = st.Result.Image, st.Result.Digest, st.Result.BaseImage
			setPhase(b, camelv1.BuildPhaseSucceeded, metav1.ConditionTrue, "Succeeded", "built and pushed "+st.Result.Image)
			return reconcile.Result{}
		}
		final := st.Attempt >= build.MaxAttempts || errors.Is(st.Err, context.Canceled)
		r.fail(b, image.ReasonOf(st.Err), st.Err.Error(), final)
		b.Status.Failure.Recovery.Attempt = st.Attempt
		b.Status.Failure.Recovery.AttemptTime = metav1.Time{Time: st.Finished}
		if !final {
			return reconcile.Result{RequeueAfter: build.Backoff(r.BackoffBase, st.Attempt)}
		}
	}
	return reconcile.Result{}
}

// fail records a failure; final ones put the build in Error.
func (r *Reconciler) fail(b *camelv1.Build, reason, message string, final bool) {
	if reason == "" {
		reason = "BuildFailed"
	}
	if b.Status.Failure == nil {
		b.Status.Failure = &camelv1.Failure{}
	}
	b.Status.Failure.Reason = message
	b.Status.Failure.Time = metav1.Time{Time: r.Clock.Now()}
	b.Status.Failure.Recovery.AttemptMax = build.MaxAttempts
	if final {
		setPhase(b, camelv1.BuildPhaseError, metav1.ConditionFalse, reason, message)
		b.Status.SetCondition(metav1.Condition{Type: camelv1.ConditionStalled, Status: metav1.ConditionTrue,
			Reason: reason, Message: message, ObservedGeneration: b.Generation})
		return
	}
	setPhase(b, camelv1.BuildPhaseFailed, metav1.ConditionFalse, reason,
		fmt.Sprintf("%s; retrying (attempt %d of %d failed)", message, attempts(b)+1, build.MaxAttempts))
}

func setPhase(b *camelv1.Build, phase camelv1.BuildPhase, ready metav1.ConditionStatus, reason, message string) {
	b.Status.Phase = phase
	b.Status.ObservedGeneration = b.Generation
	// Scheduling, queued, running, or failed and to be retried: in progress.
	progress := controller.ProgressOf(phase, camelv1.BuildPhaseSucceeded, camelv1.BuildPhaseError)
	controller.SetProgress(&b.Status.Conditions, b.Generation, ready, progress, controller.Reason(reason), message)
}

func (r *Reconciler) patchStatus(ctx context.Context, before, b *camelv1.Build) error {
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
