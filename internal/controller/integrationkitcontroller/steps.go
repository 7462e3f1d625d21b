package integrationkitcontroller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/kit"
	"github.com/caravan-dev/caravan/internal/maven"
	"github.com/caravan-dev/caravan/internal/platform"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// reconcileSpec reads what the kit builds: nothing for an external kit
// (spec.image), which runs as it is.
func (r *Reconciler) reconcileSpec(_ context.Context, s *scope) (reconcile.Result, error) {
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
		_, err = runtime.ParseDependencies(spec.Dependencies)
	}
	if err == nil {
		if _, err = maven.ParseRepositories(spec.Repositories); err != nil {
			err = fmt.Errorf("spec.repositories: %w", err)
		}
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

// createBuild creates the kit's Build; its name is the kit's, so a kit
// never has two.
func (r *Reconciler) createBuild(ctx context.Context, k *camelv1.IntegrationKit, spec kit.Spec) error {
	task, err := build.TaskOf(spec)
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
