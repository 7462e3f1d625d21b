package operator

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/controller/buildcontroller"
	"github.com/caravan-dev/caravan/internal/controller/integrationcontroller"
	"github.com/caravan-dev/caravan/internal/controller/integrationkitcontroller"
	"github.com/caravan-dev/caravan/internal/controller/kameletcontroller"
	"github.com/caravan-dev/caravan/internal/controller/pipecontroller"
	"github.com/caravan-dev/caravan/internal/controller/platformcontroller"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/metrics"
	"github.com/caravan-dev/caravan/internal/platform"
	"github.com/caravan-dev/caravan/internal/render"
)

// +kubebuilder:rbac:groups=camel.apache.org,resources=integrationoperators,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=camel.apache.org,resources=integrationoperators/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch

// startControllers starts the operator's controllers, once it holds its registration. direct is the
// uncached client of the cluster duties, whose writes the write fence holds as it holds the
// manager's client's. podMonitors tells whether the cluster serves the PodMonitor kind.
func startControllers(ctx context.Context, mgr ctrl.Manager, direct client.Client, reg *Registrar, m *metrics.Metrics, o Options, podMonitors bool) error {
	// Registrations are read when needed, not watched (see
	// controller.RecentRegistrations); the cluster duties watch them all.
	registrations := controller.NewRecentRegistrations(mgr.GetAPIReader(), clock.RealClock{})
	wrap := m.Instrument
	recorder := mgr.GetEventRecorder("caravan-operator")
	if err := (&platformcontroller.Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), OperatorID: o.ID, Namespace: o.Namespace, Version: o.Version, FieldManager: FieldManager,
		SkipCatalog: o.SkipKameletCatalog,
	}).SetupWithManager(ctx, mgr, wrap); err != nil {
		return fmt.Errorf("platform controller: %w", err)
	}
	buildEvents := make(chan event.GenericEvent, 1024)
	pods := &buildcontroller.PodBuilder{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), OperatorID: o.ID,
		Namespace: o.Namespace, PublishImage: ownImage(ctx, mgr.GetAPIReader(), o.Namespace), Poll: time.Second,
		Proxy: ProxyEnv(os.Getenv)}
	buildFunc := func(ctx context.Context, j build.Job) (build.Output, error) {
		if j.Strategy == build.StrategyPod {
			return pods.Build(ctx, j)
		}
		return build.BuildImage(ctx, j)
	}
	runner := build.NewRunner(buildFunc, func(key types.NamespacedName) {
		buildEvents <- event.GenericEvent{Object: &camelv1.Build{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}}
	}, func(st build.Status) {
		m.ObserveBuild(st.Queued, st.Started, st.Finished, st.Attempt, buildResult(st))
	}, clock.RealClock{}, platform.DefaultMaxRunningBuilds)
	if err := (&buildcontroller.Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), OperatorID: o.ID, Namespace: o.Namespace,
		Runner: runner, Events: buildEvents, Recorder: recorder, Clock: clock.RealClock{}, BackoffBase: o.BuildBackoff,
	}).SetupWithManager(ctx, mgr, wrap); err != nil {
		return fmt.Errorf("build controller: %w", err)
	}
	if err := (&integrationkitcontroller.Reconciler{
		Client: mgr.GetClient(), OperatorID: o.ID, Namespace: o.Namespace, Runner: runner, Recorder: recorder,
	}).SetupWithManager(ctx, mgr, wrap); err != nil {
		return fmt.Errorf("kit controller: %w", err)
	}
	// The stores mount.hotReload watches, in a cache of their own: the manager's caches only the
	// operator's share, and of them metadata only.
	stores, err := integrationcontroller.NewStoresCache(mgr.GetConfig(), cache.Options{
		HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()}, namespaces(o.Namespace, o.WatchNamespaces))
	if err != nil {
		return fmt.Errorf("cache of mounted stores: %w", err)
	}
	if err := mgr.Add(stores); err != nil {
		return fmt.Errorf("cache of mounted stores: %w", err)
	}
	if err := (&integrationcontroller.Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Registrations: registrations, OperatorID: o.ID, Namespace: o.Namespace,
		FieldManager: FieldManager, Recorder: recorder, Metrics: m, Clock: clock.RealClock{}, PodMonitors: podMonitors,
		Proxy: ProxyEnv(os.Getenv), Stores: stores,
	}).SetupWithManager(ctx, mgr, wrap); err != nil {
		return fmt.Errorf("integration controller: %w", err)
	}
	for _, kind := range []pipecontroller.Kind{pipecontroller.Pipe, pipecontroller.KameletBinding} {
		if err := (&pipecontroller.Reconciler{
			Kind: kind, Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), OperatorID: o.ID, Namespace: o.Namespace,
			FieldManager: FieldManager, Recorder: recorder,
		}).SetupWithManager(ctx, mgr, wrap); err != nil {
			return fmt.Errorf("%s controller: %w", kind.GVK.Kind, err)
		}
	}
	if err := (&kameletcontroller.Reconciler{
		Client: mgr.GetClient(), OperatorID: o.ID, Namespace: o.Namespace, Recorder: recorder,
	}).SetupWithManager(ctx, mgr, wrap); err != nil {
		return fmt.Errorf("kamelet controller: %w", err)
	}
	duties := &clusterDuties{mgr: mgr, direct: direct, registrations: registrations, reg: reg, o: o}
	if err := ctrlmetrics.Registry.Register(metrics.NewShareCollector(mgr.GetCache(), duties, o.ID, reg.IsDefault)); err != nil {
		return err
	}
	return duties.setup(ctx)
}

// buildResult is the result of an ended build attempt as Camel K labels it: Succeeded, Failed
// when another attempt follows, Error when it was the build's last.
func buildResult(st build.Status) string {
	switch {
	case st.Err == nil:
		return metrics.BuildSucceeded
	case buildcontroller.FinalFailure(st):
		return metrics.BuildError
	default:
		return metrics.BuildFailed
	}
}

// ownImage is the image of the operator's own pod (POD_NAME), which builder
// pods run to push kits; "" when the operator runs outside a pod.
func ownImage(ctx context.Context, reader client.Reader, namespace string) string {
	name := os.Getenv("POD_NAME")
	if name == "" {
		return ""
	}
	pod := &corev1.Pod{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, pod); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "reading the operator's own pod: builder pods cannot run", "pod", name)
		return ""
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == install.OperatorContainer {
			return c.Image
		}
	}
	return ""
}

// ProxyEnv are the proxy variables of an environment read by getenv, those set, in
// render.ProxyEnvVars order; the lower-case spellings count when the upper-case are unset.
func ProxyEnv(getenv func(string) string) []corev1.EnvVar {
	var env []corev1.EnvVar
	for _, name := range render.ProxyEnvVars {
		v := getenv(name)
		if v == "" {
			v = getenv(strings.ToLower(name))
		}
		if v != "" {
			env = append(env, corev1.EnvVar{Name: name, Value: v})
		}
	}
	return env
}
