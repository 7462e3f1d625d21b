package metrics

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// Descriptions are the descriptions of the metrics an operator serves besides
// controller-runtime's and client-go's standard ones: their names and labels.
func Descriptions() ([]*prometheus.Desc, error) {
	reg := &recorder{}
	if _, err := New(reg, "any"); err != nil {
		return nil, err
	}
	collectors := append(reg.collectors,
		NewShareCollector(nil, nil, "any", func() bool { return false }),
		NewClusterWatch("any", func() bool { return false }))
	ch := make(chan *prometheus.Desc, 64)
	go func() {
		for _, c := range collectors {
			c.Describe(ch)
		}
		close(ch)
	}()
	var descs []*prometheus.Desc
	for d := range ch {
		descs = append(descs, d)
	}
	return descs, nil
}

// Names are the names of the metrics an operator serves besides controller-runtime's
// and client-go's standard ones, sorted: what dashboards and alerts may rely on.
func Names() ([]string, error) {
	descs, err := Descriptions()
	if err != nil {
		return nil, err
	}
	fqName := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	var names []string
	var unnamed error
	for _, d := range descs {
		m := fqName.FindStringSubmatch(d.String())
		if m == nil {
			unnamed = fmt.Errorf("a metric description has no name: %s", d)
			continue
		}
		names = append(names, m[1])
	}
	if unnamed != nil {
		return nil, unnamed
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// recorder is a Registerer that keeps what is registered with it.
type recorder struct{ collectors []prometheus.Collector }

func (r *recorder) Register(c prometheus.Collector) error {
	r.collectors = append(r.collectors, c)
	return nil
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	r.collectors = append(r.collectors, cs...)
}

func (r *recorder) Unregister(prometheus.Collector) bool { return false }
