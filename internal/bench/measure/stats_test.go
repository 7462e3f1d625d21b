package measure

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dev/caravan/internal/metrics"
)

func TestPercentile(t *testing.T) {
	values := []float64{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	cases := []struct {
		name string
		p    float64
		want float64
	}{
		{"the median of ten values is the fifth smallest", 50, 5},
		{"p99 of ten values is the largest", 99, 10},
		{"p100 is the maximum", 100, 10},
		{"a tiny percentile is the minimum", 1, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := percentile(values, c.p); got != c.want {
				t.Errorf("percentile(%v) = %v, want %v", c.p, got, c.want)
			}
		})
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("Percentile of nothing = %v, want 0", got)
	}
	if values[0] != 5 {
		t.Error("Percentile sorted its input in place")
	}
}

func TestSummarize(t *testing.T) {
	got := Summarize([]float64{0.5, 2, 1})
	want := Distribution{Count: 3, P50: 1, P99: 2, Max: 2}
	if got != want {
		t.Errorf("Summarize = %+v, want %+v", got, want)
	}
}

func TestCurveCountsReadyObjectsOverTime(t *testing.T) {
	start := time.Unix(1000, 0)
	got := Curve(start, []time.Time{start.Add(2 * time.Second), start.Add(500 * time.Millisecond)})
	want := []Point{{0, 0}, {0.5, 1}, {2, 2}}
	if len(got) != len(want) {
		t.Fatalf("Curve = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Curve[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestWatchEventsAreSummedByResourceAndTheirIncreaseTaken(t *testing.T) {
	samples, err := metrics.ParseText(strings.NewReader(`# TYPE apiserver_watch_events_total counter
apiserver_watch_events_total{component="apiserver",group="",resource="pods",version="v1"} 40
apiserver_watch_events_total{component="apiserver",group="apps",resource="deployments",version="v1"} 7
apiserver_watch_events_total{component="apiserver",group="camel.apache.org",resource="integrations",version="v1"} 3
apiserver_watch_events_total{component="apiserver",group="camel.apache.org",resource="integrations",version="v1alpha1"} 2
# TYPE apiserver_request_total counter
apiserver_request_total{resource="pods",verb="GET"} 1000
`))
	if err != nil {
		t.Fatal(err)
	}
	before := WatchEventsOf(samples)
	want := map[string]float64{"pods": 40, "deployments.apps": 7, "integrations.camel.apache.org": 5}
	if !maps.Equal(before, want) {
		t.Errorf("watch events %v, want %v", before, want)
	}
	after := map[string]float64{"pods": 52, "deployments.apps": 7, "integrations.camel.apache.org": 9, "leases.coordination.k8s.io": 1}
	if got, want := Increase(before, after), map[string]float64{"pods": 12, "integrations.camel.apache.org": 4, "leases.coordination.k8s.io": 1}; !maps.Equal(got, want) {
		t.Errorf("increase %v, want %v", got, want)
	}
}
