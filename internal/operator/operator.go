// Package operator runs one Caravan operator: registration, leader election, and the controllers of
// its share. The share is the resources its id owns, watched with server-side label selectors; its
// replicas elect a leader.
package operator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/controller/integrationcontroller"
	"github.com/caravan-dev/caravan/internal/controller/kameletcontroller"
	"github.com/caravan-dev/caravan/internal/metrics"
	"github.com/caravan-dev/caravan/internal/render"
	"github.com/caravan-dev/caravan/internal/scheme"
)

// FieldManager is the server-side apply field manager of every operator.
// It is the same for all ids, so that when an integration moves, the new
// owner's apply takes over every field the previous owner set.
const FieldManager = "caravan-operator"

// Options configure one operator process.
type Options struct {
	// ID is the operator id (validated by the caller).
	ID string
	// Namespace is where the operator runs: its Lease and platform live there.
	Namespace string
	Version   string
	// Default is spec.default of the registration, when this operator
	// creates it; an existing registration keeps its own.
	Default bool
	Config  *rest.Config
	// MetricsAddr and ProbeAddr are listen addresses; "0" disables.
	MetricsAddr string
	ProbeAddr   string
	// Pprof serves the Go runtime's /debug/pprof beside the metrics.
	Pprof       bool
	LeaderElect bool
	// HeartbeatInterval is how often the registration is renewed;
	// StaleAfter is when a registration without renewal counts as gone.
	HeartbeatInterval time.Duration
	StaleAfter        time.Duration
	// BuildBackoff is the wait before the first retry of a failed build;
	// it doubles at each further retry.
	BuildBackoff time.Duration
	// WatchNamespaces limits the resources the operator serves; empty
	// means every namespace.
	WatchNamespaces []string
	// SkipKameletCatalog has the operator install no Kamelet catalog, whatever its platform says:
	// Camel K's KAMEL_INSTALL_DEFAULT_KAMELETS=false (KameletCatalogEnv).
	SkipKameletCatalog bool
	// OperatorCondition names the OperatorCondition OLM made for the operator in Namespace, when
	// OLM runs it: the operator keeps its Upgradeable condition (see Upgradeable).
	OperatorCondition string
}

// The metrics endpoint asks the API server who its callers are and what they may read.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// The cache watches these kinds even before their controllers exist.
// +kubebuilder:rbac:groups=camel.apache.org,resources=builds;pipes;kameletbindings,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Run runs the operator until ctx ends.
func Run(ctx context.Context, o Options) error {
	log := ctrl.LoggerFrom(ctx).WithValues("operatorID", o.ID, "namespace", o.Namespace)
	ctx = ctrl.LoggerInto(ctx, log)
	log.Info("Starting Caravan operator", "version", o.Version, "default", o.Default)

	podMonitors, err := servesPodMonitors(o.Config)
	if err != nil {
		return err
	}
	log.Info("Looked for the PodMonitor kind", "served", podMonitors)
	lease := client.ObjectKey{Namespace: o.Namespace, Name: o.ID + "-lock"}
	fence := &writeFence{}
	mgr, err := ctrl.NewManager(o.Config, controller.ManagerOptions(o.MetricsAddr, o.ProbeAddr, o.Pprof, o.LeaderElect, lease, ctrl.Options{
		Scheme: scheme.New(),
		// The controllers' writes go only while the registration is live.
		NewClient: func(config *rest.Config, options client.Options) (client.Client, error) {
			c, err := client.New(config, options)
			if err != nil {
				return nil, err
			}
			return fence.fenced(c), nil
		},
		Logger: log,
		Cache:  cacheOptions(o.ID, o.Namespace, o.WatchNamespaces, podMonitors),
	}))
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	m, err := metrics.New(ctrlmetrics.Registry, o.ID)
	if err != nil {
		return err
	}
	direct, err := client.New(o.Config, client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return err
	}
	registrar := &Registrar{
		Client: direct, ID: o.ID, Namespace: o.Namespace, Version: o.Version, Default: o.Default, WatchNamespaces: o.WatchNamespaces,
		Interval: o.HeartbeatInterval, StaleAfter: o.StaleAfter, Clock: clock.RealClock{},
		Recorder: mgr.GetEventRecorder("caravan-operator"), Metrics: m,
	}
	rights := &RightsCheck{Client: direct, ID: o.ID, Namespace: o.Namespace, WatchNamespaces: o.WatchNamespaces,
		PodName: os.Getenv("POD_NAME"), Recorder: registrar.Recorder, Interval: rightsEvery * o.HeartbeatInterval}
	registrar.Rights = rights
	fence.deadline = registrar.WriteDeadline
	if err := mgr.Add(rights); err != nil {
		return err
	}
	registrar.OnRegistered = func(ctx context.Context) error {
		return startControllers(ctx, mgr, fence.fenced(direct), registrar, m, o, podMonitors)
	}
	if err := mgr.Add(&identityProvider{registrar: registrar, client: direct, o: o}); err != nil {
		return err
	}
	if o.OperatorCondition != "" {
		c, err := NewUpgradeableClient(o.Config)
		if err != nil {
			return err
		}
		if err := mgr.Add(&Upgradeable{Client: c, ID: o.ID, Namespace: o.Namespace, Name: o.OperatorCondition}); err != nil {
			return err
		}
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("registration", registrar.ReadyCheck); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("rights", rights.ReadyCheck); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("caches", cachesSynced(mgr)); err != nil {
		return err
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("operator %s: %w", o.ID, err)
	}
	return nil
}

// KameletCatalogEnv, "false" in the operator's environment, has it install no Kamelet catalog, as
// on Camel K.
const KameletCatalogEnv = "KAMEL_INSTALL_DEFAULT_KAMELETS"

// cacheOptions filters every watch on owned kinds, server-side, by the
// operator-id label, so that an operator caches only its own share. A
// read of a kind without an informer fails instead of silently starting
// a cluster-wide watch. IntegrationProfiles, which integrations name, are
// cached whole. With podMonitors, the metadata of the PodMonitors the
// operator makes is cached too.
func cacheOptions(id, namespace string, watch []string, podMonitors bool) cache.Options {
	mine := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{camelv1.OperatorIDLabel: id})}
	platform := mine
	platform.Namespaces = map[string]cache.Config{namespace: {}}
	opts := cache.Options{
		DefaultNamespaces:           namespaces(namespace, watch),
		DefaultTransform:            cache.TransformStripManagedFields(),
		ReaderFailOnMissingInformer: true,
		ByObject: map[client.Object]cache.ByObject{
			&camelv1.Integration{}:          mine,
			&camelv1.IntegrationKit{}:       mine,
			&camelv1.Build{}:                mine,
			&camelv1.Pipe{}:                 mine,
			&camelv1alpha1.KameletBinding{}: mine,
			&camelv1.Kamelet{}:              kameletcontroller.CacheByObject(id, namespace, watch),
			&camelv1.IntegrationPlatform{}:  platform,
			&camelv1.IntegrationProfile{}:   {},
			&appsv1.Deployment{}:            mine,
			&corev1.ConfigMap{}:             mine,
			&corev1.Service{}:               mine,
			&policyv1.PodDisruptionBudget{}: mine,
			&networkingv1.Ingress{}:         mine,
			&batchv1.CronJob{}:              mine,
		},
	}
	if podMonitors {
		opts.ByObject[integrationcontroller.PodMonitorMetadata()] = mine
	}
	return opts
}

// servesPodMonitors tells whether the API server serves the Prometheus
// Operator's PodMonitor kind, which the prometheus trait makes.
func servesPodMonitors(cfg *rest.Config) (bool, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return false, err
	}
	gv := render.PodMonitorGVK.GroupVersion().String()
	resources, err := dc.ServerResourcesForGroupVersion(gv)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("asking the API server whether it serves %s: %w", gv, err)
	}
	for _, r := range resources.APIResources {
		if r.Kind == render.PodMonitorGVK.Kind {
			return true, nil
		}
	}
	return false, nil
}

// namespaces is the cache's namespace restriction: nil for all, else the
// watched namespaces and the operator's own.
func namespaces(own string, watch []string) map[string]cache.Config {
	if len(watch) == 0 {
		return nil
	}
	m := map[string]cache.Config{own: {}}
	for _, ns := range watch {
		m[ns] = cache.Config{}
	}
	return m
}

func cachesSynced(mgr manager.Manager) healthz.Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), time.Second)
		defer cancel()
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return errors.New("caches not synced")
		}
		return nil
	}
}

// identityProvider sets the registrar's leader identity once this replica
// is elected, from the Lease it holds, then runs the registrar.
type identityProvider struct {
	registrar *Registrar
	client    client.Client
	o         Options
}

// NeedLeaderElection makes the provider run on the leader only.
func (p *identityProvider) NeedLeaderElection() bool { return true }

// Start records the leader's identity, then runs the registrar.
func (p *identityProvider) Start(ctx context.Context) error {
	p.registrar.Identity = leaderIdentity(ctx, p.client, p.o)
	return p.registrar.Start(ctx)
}

func leaderIdentity(ctx context.Context, c client.Client, o Options) string {
	if o.LeaderElect {
		lease := &coordinationv1.Lease{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.ID + "-lock"}, lease); err == nil &&
			lease.Spec.HolderIdentity != nil {
			return *lease.Spec.HolderIdentity
		}
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s_%d", host, os.Getpid())
}

// DefaultStaleAfter is how long a registration may go without a heartbeat
// before it counts as gone: three missed renewals.
func DefaultStaleAfter(interval time.Duration) time.Duration { return 3 * interval }
