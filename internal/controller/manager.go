package controller

import (
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// ManagerOptions are o with what the managers of Caravan's processes (the
// operator, the fleet controller) set alike: metrics served at
// metricsAddr and probes at probeAddr ("0" disables either), and, when
// leaderElect, leader election by the Lease lease, released when the
// manager stops so that another replica takes over at once.
func ManagerOptions(metricsAddr, probeAddr string, leaderElect bool, lease types.NamespacedName, o ctrl.Options) ctrl.Options {
	o.Metrics = metricsserver.Options{BindAddress: metricsAddr}
	o.HealthProbeBindAddress = probeAddr
	o.LeaderElection = leaderElect
	o.LeaderElectionID = lease.Name
	o.LeaderElectionNamespace = lease.Namespace
	o.LeaderElectionReleaseOnCancel = true
	return o
}
