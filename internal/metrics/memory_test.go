package metrics

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestTheProcessMemoryGaugesSplitWhatIsTheProcesssOwn(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewRegistry()
	g.Expect(RegisterProcessMemory(reg)).To(Succeed())
	g.Expect(reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))).To(Succeed())

	value := func(name string) float64 {
		families, err := reg.Gather()
		g.Expect(err).NotTo(HaveOccurred())
		for _, f := range families {
			if f.GetName() == name {
				return f.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatalf("no %s", name)
		return 0
	}
	held := make([]byte, 64<<20)
	for i := range held {
		held[i] = 1
	}
	anonymous, pss, rss := value(AnonymousMemory), value(ProportionalMemory), value("process_resident_memory_bytes")
	g.Expect(anonymous).To(BeNumerically(">=", len(held)), "the 64 MiB written are the process's own")
	g.Expect(pss).To(BeNumerically(">=", anonymous))
	g.Expect(rss).To(BeNumerically(">", anonymous), "the binary's pages are resident and not anonymous")
	g.Expect(held[len(held)-1]).To(Equal(byte(1)))

	n, err := testutil.GatherAndCount(reg, AnonymousMemory, ProportionalMemory)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n).To(Equal(2))

	t.Log("the PSS is read again only after pssEvery: a scrape right after gives the same")
	g.Expect(value(ProportionalMemory)).To(Equal(pss))
	g.Expect(held[len(held)-1]).To(Equal(byte(1)))
}
