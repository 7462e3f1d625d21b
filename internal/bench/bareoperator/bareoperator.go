// Package bareoperator runs the bench's bare operator, the least an
// operator of Integrations can do and still tell its users when an
// integration is Ready. The bench runs it in its own process, next to the
// floor and Caravan's operators, to measure what the custom resource and
// one status write cost on its cluster.
package bareoperator

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/digest"
	"github.com/caravan-dev/caravan/internal/render"
	"github.com/caravan-dev/caravan/internal/scheme"
	"github.com/caravan-dev/caravan/internal/trait"
)

// ID is the operator id of the integrations the bare operator runs: no
// Caravan operator runs with it.
const ID = "bench-bare"

// reconciler is the least an operator of Integrations can do and still
// tell its users when an integration is Ready. For each Integration of
// its namespace it creates the rendered children (the Deployment, and the
// ConfigMap when there is one, owned by the integration), and once the
// Deployment has rolled out it writes the status once (Ready, Running).
// It records no owner, no epoch, no digest, no Event, and never updates
// a child: it measures, in the same run as the floor and Caravan, what
// the custom resource and one status write cost on this cluster.
type reconciler struct {
	client client.Client
}

// Start runs the bare operator on the integrations of namespace until ctx ends or stop is called.
// It has its own connection to the API server: cfg, with the rate limits of Caravan's operators,
// asking like them for uncompressed responses. stop may be called more than once.
func Start(ctx context.Context, cfg *rest.Config, namespace string) (stop func(), err error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 300, 600
	cfg.DisableCompression = true
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme.New(),
		Logger:                 logr.Discard(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache: cache.Options{
			DefaultNamespaces: map[string]cache.Config{namespace: {}},
			DefaultTransform:  cache.TransformStripManagedFields(),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("the bare operator: %w", err)
	}
	r := &reconciler{client: mgr.GetClient()}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("bare-integration").
		For(&camelv1.Integration{}).
		Owns(&appsv1.Deployment{}).
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: controller.Workers, SkipNameValidation: ptr.To(true)}).
		Complete(r)
	if err != nil {
		return nil, fmt.Errorf("the bare operator: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		cancel()
		return nil, errors.Join(errors.New("the bare operator: caches did not sync"), <-done)
	}
	var once sync.Once
	return func() { once.Do(func() { cancel(); <-done }) }, nil
}

// Reconcile creates the children of an Integration that is not Ready,
// or writes Ready once its Deployment has rolled out.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var it camelv1.Integration
	if err := r.client.Get(ctx, req.NamespacedName, &it); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if it.DeletionTimestamp != nil || meta.IsStatusConditionTrue(it.Status.Conditions, camelv1.ConditionReady) {
		return reconcile.Result{}, nil
	}
	var dep appsv1.Deployment
	err := r.client.Get(ctx, req.NamespacedName, &dep)
	switch {
	case apierrors.IsNotFound(err):
		return reconcile.Result{}, r.createChildren(ctx, &it)
	case err != nil:
		return reconcile.Result{}, err
	case !measure.RolledOut(&dep):
		return reconcile.Result{}, nil
	}
	base := it.DeepCopy()
	it.Status.Phase = camelv1.IntegrationPhaseRunning
	it.Status.ObservedGeneration = it.Generation
	meta.SetStatusCondition(&it.Status.Conditions, metav1.Condition{
		Type: camelv1.ConditionReady, Status: metav1.ConditionTrue, ObservedGeneration: it.Generation,
		Reason: "DeploymentReady", Message: "the Deployment has rolled out",
	})
	// With the resourceVersion read: a reconcile that read the integration
	// before its own write reached the cache is refused (and retried)
	// rather than writing Ready a second time.
	return reconcile.Result{}, r.client.Status().Patch(ctx, &it, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}

// createChildren creates the integration's ConfigMap (when it has one) and
// Deployment, as rendered for ID; a child that already exists (a
// Deployment the cache has not shown yet) is left as it is.
func (r *reconciler) createChildren(ctx context.Context, it *camelv1.Integration) error {
	cm, dep, err := Children(it, ID)
	if err != nil {
		return err
	}
	for _, obj := range []client.Object{cm, dep} {
		if obj == nil {
			continue
		}
		if err := r.client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// Children renders, with internal/render, the ConfigMap (nil when
// the integration has none) and the Deployment that an operator with the
// id operatorID makes for it, owned by it. The bench renders its floor
// with it too: the floor, the bare operator and Caravan run the same pod
// template.
func Children(it *camelv1.Integration, operatorID string) (client.Object, client.Object, error) {
	traits, err := trait.Parse(it.Spec.Traits)
	if err != nil {
		return nil, nil, err
	}
	d, err := digest.Integration(it)
	if err != nil {
		return nil, nil, err
	}
	in := render.Input{Integration: it, Traits: traits, OperatorID: operatorID, Image: traits.Container.Image(), Digest: d}
	cm, err := render.ConfigMap(in)
	if err != nil {
		return nil, nil, err
	}
	dep, err := render.Deployment(in)
	if err != nil {
		return nil, nil, err
	}
	if cm == nil {
		return nil, dep, nil
	}
	return cm, dep, nil
}
