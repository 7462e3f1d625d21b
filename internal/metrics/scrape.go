package metrics

import (
	"fmt"
	"io"
	"math"
	"strconv"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Sample is one series of a scrape. Histograms and summaries are flattened
// into the series their text exposition has: NAME_bucket{le}, NAME{quantile},
// NAME_sum and NAME_count.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Samples are the series of one scrape.
type Samples []Sample

// ParseText reads the Prometheus text exposition format, with the
// parser of prometheus/common. A malformed exposition is an error.
func ParseText(r io.Reader) (Samples, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("reading the metrics: %w", err)
	}
	var out Samples
	for name, f := range families {
		for _, m := range f.GetMetric() {
			out = append(out, flatten(name, f.GetType(), m)...)
		}
	}
	return out, nil
}

func flatten(name string, t dto.MetricType, m *dto.Metric) Samples {
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	with := func(k, v string) map[string]string {
		c := make(map[string]string, len(labels)+1)
		for lk, lv := range labels {
			c[lk] = lv
		}
		c[k] = v
		return c
	}
	switch t {
	case dto.MetricType_COUNTER:
		return Samples{{name, labels, m.GetCounter().GetValue()}}
	case dto.MetricType_GAUGE:
		return Samples{{name, labels, m.GetGauge().GetValue()}}
	case dto.MetricType_SUMMARY:
		s := m.GetSummary()
		out := Samples{{name + "_sum", labels, s.GetSampleSum()}, {name + "_count", labels, float64(s.GetSampleCount())}}
		for _, q := range s.GetQuantile() {
			out = append(out, Sample{name, with("quantile", formatFloat(q.GetQuantile())), q.GetValue()})
		}
		return out
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		h := m.GetHistogram()
		out := Samples{{name + "_sum", labels, h.GetSampleSum()}, {name + "_count", labels, float64(h.GetSampleCount())}}
		for _, b := range h.GetBucket() {
			out = append(out, Sample{name + "_bucket", with("le", formatFloat(b.GetUpperBound())), float64(b.GetCumulativeCount())})
		}
		return out
	default:
		return Samples{{name, labels, m.GetUntyped().GetValue()}}
	}
}

func formatFloat(f float64) string {
	if math.IsInf(f, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Find adds the values of the series called name whose labels hold every
// given pair ("key", "value", ...), and tells whether any did.
func (s Samples) Find(name string, labels ...string) (float64, bool) {
	var sum float64
	found := false
	for _, x := range s {
		if x.Name == name && x.matches(labels) {
			sum += x.Value
			found = true
		}
	}
	return sum, found
}

// Sum is Find's sum: 0 when no series matches.
func (s Samples) Sum(name string, labels ...string) float64 {
	sum, _ := s.Find(name, labels...)
	return sum
}

// SumFunc adds the values of the series called name that keep says to.
func (s Samples) SumFunc(name string, keep func(labels map[string]string) bool) float64 {
	var sum float64
	for _, x := range s {
		if x.Name == name && keep(x.Labels) {
			sum += x.Value
		}
	}
	return sum
}

func (x Sample) matches(pairs []string) bool {
	for i := 0; i+1 < len(pairs); i += 2 {
		if x.Labels[pairs[i]] != pairs[i+1] {
			return false
		}
	}
	return true
}
