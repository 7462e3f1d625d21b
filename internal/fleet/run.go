package fleet

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/scheme"
)

// Options configure the fleet controller's process.
type Options struct {
	// Namespace is where the fleet controller runs: its Lease lives there.
	Namespace string
	Config    *rest.Config
	Defaults  install.FleetDefaults
	// MetricsAddr and ProbeAddr are listen addresses; "0" disables.
	MetricsAddr string
	ProbeAddr   string
	LeaderElect bool
}

// Run runs the fleet controller until ctx ends. Its cache holds the
// IntegrationOperators and the operators' Deployments only; everything
// else it reads directly, when it applies.
func Run(ctx context.Context, o Options) error {
	log := ctrl.LoggerFrom(ctx).WithValues("namespace", o.Namespace)
	operators := labels.SelectorFromSet(labels.Set{"app.kubernetes.io/name": "caravan-operator"})
	lease := client.ObjectKey{Namespace: o.Namespace, Name: install.FleetName + "-lock"}
	mgr, err := ctrl.NewManager(o.Config, controller.ManagerOptions(o.MetricsAddr, o.ProbeAddr, false, o.LeaderElect, lease, ctrl.Options{
		Scheme: scheme.New(),
		Logger: log,
		Cache: cache.Options{
			DefaultTransform:            cache.TransformStripManagedFields(),
			ReaderFailOnMissingInformer: true,
			ByObject: map[client.Object]cache.ByObject{
				&camelv1alpha1.IntegrationOperator{}: {},
				&appsv1.Deployment{}:                 {Label: operators},
			},
		},
	}))
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	direct, err := client.NewWithWatch(o.Config, client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return err
	}
	r := &Reconciler{
		Client: mgr.GetClient(), Direct: direct, Defaults: o.Defaults,
		Identity: o.Namespace + "/" + install.FleetName,
		Recorder: mgr.GetEventRecorder(install.FleetName), Clock: clock.RealClock{},
	}
	if err := r.SetupWithManager(ctx, mgr, controller.Unwrapped); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	log.Info("Starting the fleet controller", "operatorImage", o.Defaults.Image, "version", o.Defaults.Version)
	return mgr.Start(ctx)
}
