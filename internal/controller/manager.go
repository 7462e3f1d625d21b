package controller

import (
	"net/http"
	"net/http/pprof"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ManagerOptions are o with what the managers of the operator and the fleet controller set alike.
// Metrics are served at metricsAddr and probes at probeAddr ("0" disables either). Metrics go
// over HTTPS, to callers whose bearer token the API server authenticates and who may get the
// path (MetricsReaderRole); with pprof, the Go runtime's /debug/pprof is served beside them,
// behind the same check. When
// leaderElect, leader election goes by the Lease lease, released when the manager stops so that
// another replica takes over at once.
func ManagerOptions(metricsAddr, probeAddr string, pprof, leaderElect bool, lease types.NamespacedName, o ctrl.Options) ctrl.Options {
	o.Metrics = metricsserver.Options{BindAddress: metricsAddr, SecureServing: true,
		FilterProvider: MetricsAuth}
	if pprof {
		o.Metrics.ExtraHandlers = pprofHandlers()
	}
	o.HealthProbeBindAddress = probeAddr
	o.LeaderElection = leaderElect
	o.LeaderElectionID = lease.Name
	o.LeaderElectionNamespace = lease.Namespace
	o.LeaderElectionReleaseOnCancel = true
	return o
}

// pprofHandlers serve the Go runtime's profiles under /debug/pprof/, as net/http/pprof does.
func pprofHandlers() map[string]http.Handler {
	return map[string]http.Handler{
		"/debug/pprof/":        http.HandlerFunc(pprof.Index),
		"/debug/pprof/cmdline": http.HandlerFunc(pprof.Cmdline),
		"/debug/pprof/profile": http.HandlerFunc(pprof.Profile),
		"/debug/pprof/symbol":  http.HandlerFunc(pprof.Symbol),
		"/debug/pprof/trace":   http.HandlerFunc(pprof.Trace),
	}
}

// Workers is how many objects of one kind a controller reconciles at once.
// Reconciles of different objects are independent (an object is in one worker at a time), and most
// of a reconcile waits on the API server, so a handful of workers keep a burst moving. Every
// controller of many objects uses it; the platform, orphan and fleet controllers, whose objects are
// few, use one worker.
const Workers = 16

// Wrap wraps the reconciler of kind before a controller runs it, as the operator's metrics do to time reconciles.
type Wrap func(kind string, r reconcile.Reconciler) reconcile.Reconciler

// Unwrapped is the Wrap that leaves a reconciler as it is.
func Unwrapped(_ string, r reconcile.Reconciler) reconcile.Reconciler { return r }
