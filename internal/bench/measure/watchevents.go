package measure

import (
	"bytes"
	"context"
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/caravan-dev/caravan/internal/metrics"
)

// watchEventsMetric counts the events the API server sent to its watch
// clients, by group, version and resource.
const watchEventsMetric = "apiserver_watch_events_total"

// WatchEventsSource reads the API server's count of the events it sent to
// its watchers.
type WatchEventsSource struct {
	c rest.Interface
}

// APIServerWatchEvents reads the watch events of the API server of cfg.
func APIServerWatchEvents(cfg *rest.Config) (*WatchEventsSource, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &WatchEventsSource{c: cs.CoreV1().RESTClient()}, nil
}

// Read returns how many events the API server has sent to its watchers
// since it started, by resource ("pods", "deployments.apps",
// "integrations.camel.apache.org").
func (s *WatchEventsSource) Read(ctx context.Context) (map[string]float64, error) {
	data, err := s.c.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	samples, err := metrics.ParseText(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return WatchEventsOf(samples), nil
}

// WatchEventsOf sums the watch events of a scrape by resource.
func WatchEventsOf(samples metrics.Samples) map[string]float64 {
	out := map[string]float64{}
	for _, x := range samples {
		if x.Name != watchEventsMetric {
			continue
		}
		r := x.Labels["resource"]
		if g := x.Labels["group"]; g != "" {
			r += "." + g
		}
		out[r] += x.Value
	}
	return out
}

// Total is the sum of the values of m.
func Total(m map[string]float64) float64 {
	var sum float64
	for _, v := range m {
		sum += v
	}
	return sum
}

// Increase is after minus before, by key, for the keys that grew.
func Increase(before, after map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}
