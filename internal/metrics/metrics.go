// Package metrics defines the operator's Prometheus metrics. Every series
// carries the operator_id label; names follow Camel K's where Camel K has
// the same metric.
package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/scheme"
)

// Metrics are one operator's collectors, with its id already applied.
type Metrics struct {
	reconcileDuration *prometheus.HistogramVec
	firstReadiness    prometheus.Observer
	buildDuration     *prometheus.HistogramVec
	buildQueue        prometheus.Observer
	buildRecoveries   *prometheus.HistogramVec
	releases          prometheus.Counter
	adoptions         *prometheus.CounterVec
	awaitingRelease   prometheus.Gauge
	heartbeat         prometheus.Gauge
	staleAfter        prometheus.Gauge
}

// How an operator came to adopt an integration another operator owned.
const (
	// AfterRelease: the previous owner recorded its release.
	AfterRelease = "release"
	// AfterExpiry: the previous owner's registration expired without a
	// release (it was gone).
	AfterExpiry = "expiry"
)

// New registers the operator's collectors with reg.
func New(reg prometheus.Registerer, operatorID string) (*Metrics, error) {
	constLabels := prometheus.Labels{"operator_id": operatorID}
	reconcileDuration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:        "camel_k_reconciliation_duration_seconds",
		Help:        "Time taken by one reconcile, by namespace, resource kind, result and, for an error, its tag.",
		ConstLabels: constLabels,
		Buckets:     []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5},
	}, []string{"namespace", "group", "version", "kind", "result", "tag"})
	firstReadiness := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:        "camel_k_integration_first_readiness_seconds",
		Help:        "Time from an integration's creation to its first Ready condition.",
		ConstLabels: constLabels,
		Buckets:     []float64{1, 2, 5, 10, 20, 30, 60, 120, 300, 600},
	})
	buildBuckets := []float64{0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600}
	buildDuration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "camel_k_build_duration_seconds", Help: "Duration of one build attempt, by result.",
		ConstLabels: constLabels, Buckets: buildBuckets,
	}, []string{"result"})
	buildQueue := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "camel_k_build_queue_duration_seconds", Help: "Time a build attempt waited for a free build slot.",
		ConstLabels: constLabels, Buckets: buildBuckets,
	})
	buildRecoveries := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "camel_k_build_recovery_attempts", Help: "Recoveries before each ended build attempt (0 for a first attempt), by result.",
		ConstLabels: constLabels, Buckets: []float64{0, 1, 2, 3, 4, 5},
	}, []string{"result"})
	releases := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "caravan_integration_releases_total", ConstLabels: constLabels,
		Help: "Integrations this operator released to another operator.",
	})
	adoptions := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "caravan_integration_adoptions_total", ConstLabels: constLabels,
		Help: "Integrations this operator adopted from another operator, by what it waited for: " +
			"the previous owner's release, or the expiry of its registration (it was gone).",
	}, []string{"after"})
	awaitingRelease := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "caravan_integrations_awaiting_release", ConstLabels: constLabels,
		Help: "Integrations assigned to this operator whose previous owner, still live, has not released them yet.",
	})
	heartbeat := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "caravan_registration_heartbeat_timestamp_seconds", ConstLabels: constLabels,
		Help: "When this operator last renewed its registration, in seconds since the epoch; 0 before the first renewal.",
	})
	staleAfter := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "caravan_registration_stale_after_seconds", ConstLabels: constLabels,
		Help: "How long after its last renewal this operator's registration counts as gone, and the operator stops.",
	})
	for _, c := range []prometheus.Collector{reconcileDuration, firstReadiness, buildDuration, buildQueue, buildRecoveries,
		releases, adoptions, awaitingRelease, heartbeat, staleAfter} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	if err := RegisterProcessMemory(reg); err != nil {
		return nil, err
	}
	for _, after := range []string{AfterRelease, AfterExpiry} {
		adoptions.WithLabelValues(after) // both series exist from the start, at 0
	}
	return &Metrics{reconcileDuration: reconcileDuration, firstReadiness: firstReadiness,
		buildDuration: buildDuration, buildQueue: buildQueue, buildRecoveries: buildRecoveries,
		releases: releases, adoptions: adoptions, awaitingRelease: awaitingRelease,
		heartbeat: heartbeat, staleAfter: staleAfter}, nil
}

// Renewed records a renewal of the registration at t, which counts as gone staleAfter later.
func (m *Metrics) Renewed(t time.Time, staleAfter time.Duration) {
	m.heartbeat.Set(float64(t.UnixNano()) / 1e9)
	m.staleAfter.Set(staleAfter.Seconds())
}

// Released counts a release of an integration to another operator.
func (m *Metrics) Released() { m.releases.Inc() }

// Adopted counts an adoption of another operator's integration, after
// AfterRelease or AfterExpiry.
func (m *Metrics) Adopted(after string) { m.adoptions.WithLabelValues(after).Inc() }

// SetAwaitingRelease records how many integrations wait for their
// previous owner's release.
func (m *Metrics) SetAwaitingRelease(n int) { m.awaitingRelease.Set(float64(n)) }

// ObserveBuild records one ended build attempt: its queue time, its duration and the
// recoveries before it, by result (BuildSucceeded, BuildFailed or BuildError, Camel K's).
func (m *Metrics) ObserveBuild(queued, started, finished time.Time, attempt int32, result string) {
	m.buildQueue.Observe(started.Sub(queued).Seconds())
	m.buildDuration.WithLabelValues(result).Observe(finished.Sub(started).Seconds())
	m.buildRecoveries.WithLabelValues(result).Observe(float64(attempt - 1))
}

// ObserveFirstReadiness records how long an integration took to become
// ready the first time.
func (m *Metrics) ObserveFirstReadiness(d time.Duration) { m.firstReadiness.Observe(d.Seconds()) }

// The label values of the reconcile and build metrics, Camel K's.
const (
	// Reconciled, Requeued and Errored are the reconcile results.
	Reconciled = "Reconciled"
	Requeued   = "Requeued"
	Errored    = "Errored"
	// PlatformError tags an error that a retry may clear; UserError one
	// that only the user can fix (bad input: a terminal error).
	PlatformError = "PlatformError"
	UserError     = "UserError"
	// BuildSucceeded, BuildFailed (another attempt follows) and BuildError (the build's last
	// attempt failed) are the results of a build attempt.
	BuildSucceeded = "Succeeded"
	BuildFailed    = "Failed"
	BuildError     = "Error"
)

// Instrument wraps a reconciler so that each call is timed by namespace, resource kind,
// result (Reconciled, Requeued, Errored) and, for an error, tag (PlatformError, or UserError
// for bad input), as Camel K labels them.
func (m *Metrics) Instrument(kind string, r reconcile.Reconciler) reconcile.Reconciler {
	gv := groupVersionOf(kind)
	return reconcile.Func(func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
		start := time.Now()
		res, err := r.Reconcile(ctx, req)
		result, tag := Reconciled, ""
		switch {
		case errors.Is(err, reconcile.TerminalError(nil)):
			result, tag = Errored, UserError
		case err != nil:
			result, tag = Errored, PlatformError
		case !res.IsZero():
			result = Requeued
		}
		m.reconcileDuration.WithLabelValues(req.Namespace, gv.Group, gv.Version, kind, result, tag).Observe(time.Since(start).Seconds())
		return res, err
	})
}

// groupVersionOf is the API group and version of Caravan's resource kind, the served version
// that Camel K's controllers reconcile; empty for a controller of no resource kind.
func groupVersionOf(kind string) schema.GroupVersion {
	var found schema.GroupVersion
	for gvk := range scheme.New().AllKnownTypes() {
		if gvk.Kind == kind && gvk.Group == camelv1.GroupVersion.Group && (found.Empty() || gvk.Version == camelv1.GroupVersion.Version) {
			found = gvk.GroupVersion()
		}
	}
	return found
}
