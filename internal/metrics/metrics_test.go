package metrics

import (
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
