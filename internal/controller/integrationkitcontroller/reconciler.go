// Package integrationkitcontroller reconciles the IntegrationKits an operator owns.
// An external kit (spec.image set) is Ready as soon as it is seen. A
// platform kit gets one Build, owned by the kit, and takes its image, by
// digest, from that Build once it succeeds.
package integrationkitcontroller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/kit"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/internal/platform"
)

// Reconciler reconciles IntegrationKits.
type Reconciler struct {
	Client     client.Client
	OperatorID string
	// Namespace is the operator's, where its platform lives.
	Namespace string
	// Runner is the operator's build runner, told to cancel the Build of a
	// kit that is deleted.
	Runner *build.Runner
}

// +kubebuilder:rbac:groups=camel.apache.org,resources=integrationkits,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=camel.apache.org,resources=integrationkits/status,verbs=get;update;patch

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager, wrap controller.Wrap) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("integrationkit").
		For(&camelv1.IntegrationKit{}).
		Owns(&camelv1.Build{}).
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: controller.Workers}).
		Complete(wrap("IntegrationKit", r))
}

// Reconcile reconciles one object; a lost optimistic-lock race is retried
// quietly.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return controller.RequeueOnConflict(r.reconcile(ctx, req))
}

// scope is what one reconcile of a kit knows: the kit, the spec it
// builds, and its Build once there is one.
type scope struct {
	k    *camelv1.IntegrationKit
	spec kit.Spec
	// build is the kit's Build, once it was read.
	build *camelv1.Build
	// submitted is set by reconcileBuild when the kit had no Build and this
	// reconcile created it.
	submitted bool
	// Outcome is set by a step that found the kit invalid, or that
	// found nothing to build.
	controller.Outcome
}

// reconcile runs the steps in order; the status is computed from what
// they observed and written once, at the end.
func (r *Reconciler) reconcile(ctx context.Context, req reconcile.Request) (result reconcile.Result, retErr error) {
	k := &camelv1.IntegrationKit{}
	if err := r.Client.Get(ctx, req.NamespacedName, k); err != nil {
		if apierrors.IsNotFound(err) {
			// Gone from this operator's share. If it was deleted, its
			// build (named like the kit) must stop.
			r.Runner.Cancel(req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !ownership.Owns(k.Annotations, r.OperatorID) {
		return reconcile.Result{}, nil
	}
	if !k.DeletionTimestamp.IsZero() {
		r.Runner.Cancel(req.NamespacedName)
		return reconcile.Result{}, nil
	}
	before := k.DeepCopy()
	s := &scope{k: k}
	defer func() {
		computeStatus(s)
		if _, err := controller.PatchStatus(ctx, r.Client, before, k, before.Status, k.Status); err != nil {
			// The status must land: a failed write is retried, even
			// when the steps ended in a terminal error.
			retErr = err
		}
	}()
	return controller.RunSteps(ctx, s, &s.Outcome, r.resolveSpec, r.reconcileBuild)
}

// resolveSpec reads what the kit builds: nothing for an external kit
// (spec.image), which runs as it is.
func (r *Reconciler) resolveSpec(_ context.Context, s *scope) (reconcile.Result, error) {
	if s.k.Spec.Image != "" {
		if err := image.ValidateReference(s.k.Spec.Image); err != nil {
			s.Failure = controller.Because(ReasonInvalidKit, "spec.image: "+err.Error())
			return reconcile.Result{}, nil
		}
		s.Done = true
		return reconcile.Result{}, nil
	}
	spec, err := kit.FromResource(s.k)
	if err == nil {
		err = kit.ValidateDependencies(spec.Dependencies)
	}
	if err != nil {
		s.Failure = controller.Because(ReasonInvalidKit, err.Error())
		return reconcile.Result{}, nil
	}
	s.spec = spec
	return reconcile.Result{}, nil
}

// reconcileBuild reads the kit's Build, or creates it.
func (r *Reconciler) reconcileBuild(ctx context.Context, s *scope) (reconcile.Result, error) {
	b := &camelv1.Build{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(s.k), b)
	if apierrors.IsNotFound(err) {
		s.submitted = true
		return reconcile.Result{}, r.createBuild(ctx, s.k, s.spec)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	s.build = b
	return reconcile.Result{}, nil
}

// computeStatus sets the kit's status from what the steps found.
func computeStatus(s *scope) {
	k := s.k
	k.Status.ObservedGeneration = k.Generation
	switch {
	case s.Failure != nil:
		setStatus(k, camelv1.IntegrationKitPhaseError, metav1.ConditionFalse, s.Failure.Reason, s.Failure.Message)
	case k.Spec.Image != "":
		k.Status.Image = k.Spec.Image
		setStatus(k, camelv1.IntegrationKitPhaseReady, metav1.ConditionTrue, ReasonExternalImage,
			"the kit runs the pre-built image "+k.Spec.Image)
	case s.submitted:
		setStatus(k, camelv1.IntegrationKitPhaseBuildSubmitted, metav1.ConditionFalse, ReasonBuildSubmitted, "the kit's build is submitted")
	case s.build != nil:
		fromBuild(k, s.build, s.spec)
	default:
		// The Build could not be read: the status stays as it was.
	}
}

// createBuild creates the kit's Build; its name is the kit's, so a kit
// never has two.
func (r *Reconciler) createBuild(ctx context.Context, k *camelv1.IntegrationKit, spec kit.Spec) error {
	task, err := build.Task(spec)
	if err != nil {
		return err
	}
	b := &camelv1.Build{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: k.Namespace, Name: k.Name,
			Annotations: map[string]string{camelv1.OperatorIDAnnotation: r.OperatorID},
			Labels: map[string]string{camelv1.OperatorIDLabel: r.OperatorID,
				camelv1.CreatedByKindLabel: "IntegrationKit", camelv1.CreatedByNameLabel: k.Name},
		},
		Spec: camelv1.BuildSpec{Tasks: []camelv1.RawObject{task}},
	}
	itp := &camelv1.IntegrationPlatform{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.OperatorID}, itp); err == nil {
		b.Spec.Timeout = platform.Resolve(itp.Spec).Build.Timeout
	}
	if err := controllerutil.SetControllerReference(k, b, r.Client.Scheme()); err != nil {
		return err
	}
	if err := r.Client.Create(ctx, b); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the build of kit %s: %w", k.Name, err)
	}
	return nil
}

// fromBuild derives the kit's status from its build's.
func fromBuild(k *camelv1.IntegrationKit, b *camelv1.Build, spec kit.Spec) {
	c := b.Status.GetCondition(camelv1.ConditionReady)
	reason, message := ReasonBuildSubmitted, "the kit's build is submitted"
	if c != nil {
		reason, message = controller.Reason(c.Reason), "build "+b.Name+": "+c.Message
	}
	switch b.Status.Phase {
	case camelv1.BuildPhaseSucceeded:
		k.Status.Image, k.Status.Digest, k.Status.BaseImage = b.Status.Image, b.Status.Digest, b.Status.BaseImage
		k.Status.Failure = nil
		k.Status.Artifacts = artifacts(spec)
		setStatus(k, camelv1.IntegrationKitPhaseReady, metav1.ConditionTrue, ReasonBuilt, "built "+b.Status.Image)
	case camelv1.BuildPhaseError:
		k.Status.Failure = b.Status.Failure.DeepCopy()
		setStatus(k, camelv1.IntegrationKitPhaseError, metav1.ConditionFalse, reason, message)
	case camelv1.BuildPhaseRunning:
		setStatus(k, camelv1.IntegrationKitPhaseBuildRunning, metav1.ConditionFalse, reason, message)
	default:
		k.Status.Failure = b.Status.Failure.DeepCopy()
		setStatus(k, camelv1.IntegrationKitPhaseBuildSubmitted, metav1.ConditionFalse, reason, message)
	}
}

func artifacts(spec kit.Spec) []camelv1.Artifact {
	files, err := kit.Layer(spec)
	if err != nil {
		return nil
	}
	out := make([]camelv1.Artifact, 0, len(files))
	for _, f := range files {
		out = append(out, camelv1.Artifact{ID: f.Path, Target: f.Path})
	}
	return out
}

func setStatus(k *camelv1.IntegrationKit, phase camelv1.IntegrationKitPhase, status metav1.ConditionStatus, reason controller.Reason, message string) {
	k.Status.Phase = phase
	progress := controller.ProgressOf(phase, camelv1.IntegrationKitPhaseReady, camelv1.IntegrationKitPhaseError)
	controller.SetProgress(&k.Status.Conditions, k.Generation, status, progress, reason, message)
}
