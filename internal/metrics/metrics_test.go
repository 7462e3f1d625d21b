package metrics

import (
	"os"
	"regexp"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestHandoverMetricsCountReleasesAdoptionsAndWhatWaits(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewRegistry()
	m, err := New(reg, "tenant-a")
	g.Expect(err).NotTo(HaveOccurred())

	g.Expect(testutil.ToFloat64(m.adoptions.WithLabelValues(AfterExpiry))).To(BeZero())
	m.SetAwaitingRelease(2)
	g.Expect(testutil.ToFloat64(m.awaitingRelease)).To(Equal(2.0))

	m.Adopted(AfterRelease)
	m.Adopted(AfterRelease)
	m.Adopted(AfterExpiry)
	m.Released()
	g.Expect(testutil.ToFloat64(m.adoptions.WithLabelValues(AfterRelease))).To(Equal(2.0))
	g.Expect(testutil.ToFloat64(m.adoptions.WithLabelValues(AfterExpiry))).To(Equal(1.0))
	g.Expect(testutil.ToFloat64(m.releases)).To(Equal(1.0))

	n, err := testutil.GatherAndCount(reg, "caravan_integration_adoptions_total", "caravan_integrations_awaiting_release",
		"caravan_integration_releases_total")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n).To(Equal(4), "two adoption series, the gauge and the release counter")
}

// registered records the collectors registered with it.
type registered struct{ collectors []prometheus.Collector }

func (r *registered) Register(c prometheus.Collector) error {
	r.collectors = append(r.collectors, c)
	return nil
}
func (r *registered) MustRegister(cs ...prometheus.Collector) {
	r.collectors = append(r.collectors, cs...)
}
func (r *registered) Unregister(prometheus.Collector) bool { return false }

func TestEveryMetricIsInTheOperationsReference(t *testing.T) {
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	reg := &registered{}
	if _, err := New(reg, "tenant-a"); err != nil {
		t.Fatal(err)
	}
	collectors := append(reg.collectors,
		NewShareCollector(nil, nil, "tenant-a", func() bool { return false }),
		NewClusterWatch("tenant-a", func() bool { return false }))
	descs := make(chan *prometheus.Desc, 64)
	for _, c := range collectors {
		c.Describe(descs)
	}
	close(descs)
	fqName := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	names := 0
	for d := range descs {
		m := fqName.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no name in %s", d)
		}
		names++
		if !strings.Contains(string(doc), "| `"+m[1]+"` |") {
			t.Errorf("docs/operations.md does not describe the metric %s", m[1])
		}
	}
	if names < 12 {
		t.Errorf("only %d metrics described: the collectors were not all read", names)
	}
}
