//go:build linux

package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/procfs"
)

// memoryCollector reads the anonymous memory from /proc/self/status at
// each scrape, and the PSS from /proc/self/smaps_rollup at most every
// pssEvery.
type memoryCollector struct {
	self                  procfs.Proc
	anonymous, proportion *prometheus.Desc

	mu      sync.Mutex
	pss     float64
	pssRead time.Time
}

// RegisterProcessMemory registers the gauges AnonymousMemory and
// ProportionalMemory with reg. Where /proc cannot be read (not Linux),
// it registers nothing.
func RegisterProcessMemory(reg prometheus.Registerer) error {
	self, err := procfs.Self()
	if err != nil {
		return nil
	}
	if _, err := self.ProcSMapsRollup(); err != nil {
		return nil
	}
	return reg.Register(&memoryCollector{self: self,
		anonymous: prometheus.NewDesc(AnonymousMemory,
			"Resident memory of the process backed by no file (heap, stacks, runtime), in bytes, from /proc/self/status (RssAnon).", nil, nil),
		proportion: prometheus.NewDesc(ProportionalMemory,
			"Resident memory of the process with each page shared with other processes divided among them (PSS), in bytes, read at most every 30 seconds.", nil, nil),
	})
}

// Describe sends the two gauges' descriptions.
func (c *memoryCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.anonymous
	ch <- c.proportion
}

// Collect reads the status, and smaps_rollup when its last reading is
// older than pssEvery; a gauge whose file cannot be read is not sent.
func (c *memoryCollector) Collect(ch chan<- prometheus.Metric) {
	if st, err := c.self.NewStatus(); err == nil {
		ch <- prometheus.MustNewConstMetric(c.anonymous, prometheus.GaugeValue, float64(st.RssAnon))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); now.Sub(c.pssRead) >= pssEvery {
		r, err := c.self.ProcSMapsRollup()
		if err != nil {
			return
		}
		c.pss, c.pssRead = float64(r.Pss), now
	}
	ch <- prometheus.MustNewConstMetric(c.proportion, prometheus.GaugeValue, c.pss)
}
