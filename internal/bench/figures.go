package bench

import (
	"context"
	"fmt"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/internal/metrics"
)

const mib = 1024 * 1024

// OperatorFigures are one operator's costs over one measurement, from its
// own metrics (counters as the difference between two scrapes).
type OperatorFigures struct {
	ID    string `json:"id"`
	Owned int    `json:"owned"`
	// CPUSeconds is process_cpu_seconds_total's increase.
	CPUSeconds float64 `json:"cpuSeconds"`
	// PeakHeapMiB and PeakRSSMiB are the largest go_memstats_heap_alloc_bytes
	// and process_resident_memory_bytes sampled every second.
	PeakHeapMiB float64 `json:"peakHeapMiB"`
	PeakRSSMiB  float64 `json:"peakRSSMiB"`
	// Reconciles counts Integration reconciles; Reads are GET requests
	// (get, list, watch) and Writes POST, PUT, PATCH and DELETE requests of
	// the operator's clients (rest_client_requests_total); Events are the
	// Events about its integrations. All per owned integration.
	ReconcilesPerIntegration float64 `json:"reconcilesPerIntegration"`
	// RequeuesPerIntegration counts the reconciles among them that ended
	// in a requeue (a status write that lost an optimistic-lock race to a
	// newer write, or a wait).
	RequeuesPerIntegration float64 `json:"requeuesPerIntegration"`
	ReadsPerIntegration    float64 `json:"readsPerIntegration"`
	WritesPerIntegration   float64 `json:"writesPerIntegration"`
	EventsPerIntegration   float64 `json:"eventsPerIntegration"`
	// ReconcileBusySeconds is the time spent in Integration reconciles
	// (the sum of camel_k_reconciliation_duration_seconds): close to the
	// wall time, the controller's workers were the bottleneck.
	ReconcileBusySeconds float64 `json:"reconcileBusySeconds"`
}

// counters are the cumulative figures of one scrape.
type counters struct {
	cpu, reconciles, requeues, reconcileSeconds, reads, writes float64
}

func countersOf(s metrics.Samples) counters {
	return counters{
		cpu:              s.Sum("process_cpu_seconds_total"),
		reconciles:       s.Sum("camel_k_reconciliation_duration_seconds_count", "kind", "Integration"),
		requeues:         s.Sum("camel_k_reconciliation_duration_seconds_count", "kind", "Integration", "result", "requeue"),
		reconcileSeconds: s.Sum("camel_k_reconciliation_duration_seconds_sum", "kind", "Integration"),
		reads:            s.SumFunc("rest_client_requests_total", isRead),
		writes:           s.SumFunc("rest_client_requests_total", isWrite),
	}
}

func (c counters) minus(o counters) counters {
	return counters{cpu: c.cpu - o.cpu, reconciles: c.reconciles - o.reconciles, requeues: c.requeues - o.requeues,
		reconcileSeconds: c.reconcileSeconds - o.reconcileSeconds, reads: c.reads - o.reads, writes: c.writes - o.writes}
}

// scrapeAll scrapes every operator.
func scrapeAll(ctx context.Context, ops []*Operator) ([]counters, error) {
	out := make([]counters, len(ops))
	for i, op := range ops {
		s, err := op.Scrape(ctx)
		if err != nil {
			return nil, err
		}
		out[i] = countersOf(s)
	}
	return out, nil
}

// operatorFigures turns the counters before and after a measurement, the
// operators' peaks, their shares and the Events about their integrations
// into per-integration figures.
func operatorFigures(ops []*Operator, before, after []counters, owned, events []int) []OperatorFigures {
	out := make([]OperatorFigures, len(ops))
	for i, op := range ops {
		d := after[i].minus(before[i])
		heap, rss := op.peaks()
		n := float64(owned[i])
		out[i] = OperatorFigures{
			ID: op.ID, Owned: owned[i], CPUSeconds: round3(d.cpu),
			PeakHeapMiB: round3(heap / mib), PeakRSSMiB: round3(rss / mib),
			ReconcilesPerIntegration: round3(ratio(d.reconciles, n)),
			RequeuesPerIntegration:   round3(ratio(d.requeues, n)),
			ReadsPerIntegration:      round3(ratio(d.reads, n)),
			WritesPerIntegration:     round3(ratio(d.writes, n)),
			EventsPerIntegration:     round3(ratio(float64(events[i]), n)),
			ReconcileBusySeconds:     round3(d.reconcileSeconds),
		}
	}
	return out
}

// totals are the figures of all operators together, per integration.
func totals(figs []OperatorFigures) OperatorFigures {
	t := OperatorFigures{ID: "all"}
	for _, f := range figs {
		n := float64(f.Owned)
		t.Owned += f.Owned
		t.CPUSeconds += f.CPUSeconds
		t.ReconcileBusySeconds = max(t.ReconcileBusySeconds, f.ReconcileBusySeconds)
		t.PeakHeapMiB += f.PeakHeapMiB
		t.PeakRSSMiB += f.PeakRSSMiB
		t.ReconcilesPerIntegration += f.ReconcilesPerIntegration * n
		t.RequeuesPerIntegration += f.RequeuesPerIntegration * n
		t.ReadsPerIntegration += f.ReadsPerIntegration * n
		t.WritesPerIntegration += f.WritesPerIntegration * n
		t.EventsPerIntegration += f.EventsPerIntegration * n
	}
	n := float64(t.Owned)
	t.CPUSeconds = round3(t.CPUSeconds)
	t.ReconcilesPerIntegration = round3(ratio(t.ReconcilesPerIntegration, n))
	t.RequeuesPerIntegration = round3(ratio(t.RequeuesPerIntegration, n))
	t.ReadsPerIntegration = round3(ratio(t.ReadsPerIntegration, n))
	t.WritesPerIntegration = round3(ratio(t.WritesPerIntegration, n))
	t.EventsPerIntegration = round3(ratio(t.EventsPerIntegration, n))
	return t
}

// eventsByRegarding counts the Events in namespace written by Caravan's
// operators, by the name of the object they are about.
func eventsByRegarding(ctx context.Context, c client.Client, namespace string) (map[string]int, error) {
	list := &eventsv1.EventList{}
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing events: %w", err)
	}
	out := map[string]int{}
	for _, ev := range list.Items {
		if ev.ReportingController == "caravan-operator" || ev.DeprecatedSource.Component == "caravan-operator" {
			out[ev.Regarding.Name]++
		}
	}
	return out, nil
}

// sampleOperators samples every operator's memory each second until ctx
// ends.
func sampleOperators(ctx context.Context, ops []*Operator) {
	for _, op := range ops {
		go op.sampleMemory(ctx, time.Second)
	}
}
