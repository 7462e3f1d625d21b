package measure

import (
	"context"
	"fmt"
	"net/url"

	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/internal/metrics"
)

// MiB is a mebibyte, in bytes.
const MiB = 1024 * 1024

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
	// PeakOwnMiB is the largest caravan_process_anonymous_memory_bytes
	// sampled: the memory that is the operator's alone, without the pages
	// of its binary, which the operators of one image on a node share.
	PeakOwnMiB float64 `json:"peakOwnMiB,omitempty"`
	// IdleRSSMiB, IdleOwnMiB and IdlePSSMiB are the operator's resident,
	// own (anonymous) and proportional (PSS) memory when the measurement
	// starts, owning nothing: its fixed cost.
	IdleRSSMiB float64 `json:"idleRSSMiB,omitempty"`
	IdleOwnMiB float64 `json:"idleOwnMiB,omitempty"`
	IdlePSSMiB float64 `json:"idlePSSMiB,omitempty"`
	// ReconcilesPerIntegration counts Integration reconciles. Reads are GET
	// requests (get, list, watch) and Writes POST, PUT, PATCH and DELETE
	// requests of the operator's clients (rest_client_requests_total);
	// Events are the Events about its integrations. All are per owned
	// integration.
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

// Counters are the cumulative figures of one scrape of an operator, and
// its memory gauges at that scrape (RSS, Own and PSS, in bytes).
type Counters struct {
	CPU, Reconciles, Requeues, ReconcileSeconds, Reads, Writes float64
	RSS, Own, PSS                                              float64
}

// CountersOf reads the counters of a scrape.
func CountersOf(s metrics.Samples) Counters {
	return Counters{
		CPU:              s.Sum("process_cpu_seconds_total"),
		Reconciles:       s.Sum("camel_k_reconciliation_duration_seconds_count", "kind", "Integration"),
		Requeues:         s.Sum("camel_k_reconciliation_duration_seconds_count", "kind", "Integration", "result", metrics.Requeued),
		ReconcileSeconds: s.Sum("camel_k_reconciliation_duration_seconds_sum", "kind", "Integration"),
		Reads:            s.SumFunc("rest_client_requests_total", isRead),
		Writes:           s.SumFunc("rest_client_requests_total", isWrite),
		RSS:              s.Sum(rss),
		Own:              s.Sum(metrics.AnonymousMemory),
		PSS:              s.Sum(metrics.ProportionalMemory),
	}
}

const rss = "process_resident_memory_bytes"

// Minus is the increase of the counters from o to c (the gauges are
// left out).
func (c Counters) Minus(o Counters) Counters {
	return Counters{CPU: c.CPU - o.CPU, Reconciles: c.Reconciles - o.Reconciles, Requeues: c.Requeues - o.Requeues,
		ReconcileSeconds: c.ReconcileSeconds - o.ReconcileSeconds, Reads: c.Reads - o.Reads, Writes: c.Writes - o.Writes}
}

// Peaks are the largest memory figures sampled over a measurement, in
// bytes.
type Peaks struct {
	Heap, RSS, Own float64
}

// MemoryQuery asks an operator's metrics handler for the gauges that
// WithSample reads, and no other.
var MemoryQuery = url.Values{"name[]": {heapAlloc, rss, metrics.AnonymousMemory}}.Encode()

const heapAlloc = "go_memstats_heap_alloc_bytes"

// WithSample is p raised to the memory of the scrape s where s has more.
func (p Peaks) WithSample(s metrics.Samples) Peaks {
	return Peaks{Heap: max(p.Heap, s.Sum(heapAlloc)), RSS: max(p.RSS, s.Sum(rss)),
		Own: max(p.Own, s.Sum(metrics.AnonymousMemory))}
}

// OperatorFigure turns what operator id did over a measurement into per-integration figures.
// It reads its counters before and after (its memory before as its fixed cost), its peaks
// over it, the integrations it owned and the Events about them.
func OperatorFigure(id string, before, after Counters, peaks Peaks, owned, events int) OperatorFigures {
	d := after.Minus(before)
	n := float64(owned)
	return OperatorFigures{
		ID: id, Owned: owned, CPUSeconds: Round3(d.CPU),
		PeakHeapMiB: Round3(peaks.Heap / MiB), PeakRSSMiB: Round3(peaks.RSS / MiB), PeakOwnMiB: Round3(peaks.Own / MiB),
		IdleRSSMiB: Round3(before.RSS / MiB), IdleOwnMiB: Round3(before.Own / MiB), IdlePSSMiB: Round3(before.PSS / MiB),
		ReconcilesPerIntegration: Round3(Ratio(d.Reconciles, n)),
		RequeuesPerIntegration:   Round3(Ratio(d.Requeues, n)),
		ReadsPerIntegration:      Round3(Ratio(d.Reads, n)),
		WritesPerIntegration:     Round3(Ratio(d.Writes, n)),
		EventsPerIntegration:     Round3(Ratio(float64(events), n)),
		ReconcileBusySeconds:     Round3(d.ReconcileSeconds),
	}
}

// Totals are the figures of all operators together, per integration.
func Totals(figs []OperatorFigures) OperatorFigures {
	t := OperatorFigures{ID: "all"}
	for _, f := range figs {
		n := float64(f.Owned)
		t.Owned += f.Owned
		t.CPUSeconds += f.CPUSeconds
		t.ReconcileBusySeconds = max(t.ReconcileBusySeconds, f.ReconcileBusySeconds)
		t.PeakHeapMiB += f.PeakHeapMiB
		t.PeakRSSMiB += f.PeakRSSMiB
		t.PeakOwnMiB += f.PeakOwnMiB
		t.IdleRSSMiB += f.IdleRSSMiB
		t.IdleOwnMiB += f.IdleOwnMiB
		t.IdlePSSMiB += f.IdlePSSMiB
		t.ReconcilesPerIntegration += f.ReconcilesPerIntegration * n
		t.RequeuesPerIntegration += f.RequeuesPerIntegration * n
		t.ReadsPerIntegration += f.ReadsPerIntegration * n
		t.WritesPerIntegration += f.WritesPerIntegration * n
		t.EventsPerIntegration += f.EventsPerIntegration * n
	}
	n := float64(t.Owned)
	t.CPUSeconds = Round3(t.CPUSeconds)
	t.ReconcilesPerIntegration = Round3(Ratio(t.ReconcilesPerIntegration, n))
	t.RequeuesPerIntegration = Round3(Ratio(t.RequeuesPerIntegration, n))
	t.ReadsPerIntegration = Round3(Ratio(t.ReadsPerIntegration, n))
	t.WritesPerIntegration = Round3(Ratio(t.WritesPerIntegration, n))
	t.EventsPerIntegration = Round3(Ratio(t.EventsPerIntegration, n))
	return t
}

// EventsByRegarding counts the Events in namespace written by Caravan's
// operators, by the name of the object they are about.
func EventsByRegarding(ctx context.Context, c client.Reader, namespace string) (map[string]int, error) {
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

// LiveHeap is the heap kept by the last garbage collection of the
// process scraped: live = next_gc / (1 + GOGC/100).
func LiveHeap(s metrics.Samples) float64 {
	gogc := 100.0
	for _, x := range s {
		if x.Name == "go_gc_gogc_percent" {
			gogc = x.Value
		}
	}
	return s.Sum("go_memstats_next_gc_bytes") / (1 + gogc/100)
}
