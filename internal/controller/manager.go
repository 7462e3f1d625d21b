package controller

import (
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ManagerOptions are o with what the managers of the operator and the fleet controller set alike.
// Metrics are served at metricsAddr and probes at probeAddr ("0" disables either), and, when
// leaderElect, leader election goes by the Lease lease, released when the manager stops so that
// another replica takes over at once.
func ManagerOptions(metricsAddr, probeAddr string, leaderElect bool, lease types.NamespacedName, o ctrl.Options) ctrl.Options {
	o.Metrics = metricsserver.Options{BindAddress: metricsAddr}
	o.HealthProbeBindAddress = probeAddr
	o.LeaderElection = leaderElect
	o.LeaderElectionID = lease.Name
	o.LeaderElectionNamespace = lease.Namespace
	o.LeaderElectionReleaseOnCancel = true
	return o
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
