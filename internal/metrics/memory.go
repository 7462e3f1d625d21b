package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/procfs"
)

// The process's memory, split as a platform team needs to size an
// operator: resident memory counts every page of the binary it touched,
// pages which every process mapping the same file (the other operator
// pods of one image on a node) shares.
const (
	// AnonymousMemory is the process's own memory (heap, stacks, runtime),
	// backed by no file: what each more operator adds.
	AnonymousMemory = "caravan_process_anonymous_memory_bytes"
	// ProportionalMemory is the resident memory with each shared page
	// divided among the processes that map it (Linux's PSS).
	ProportionalMemory = "caravan_process_proportional_memory_bytes"
)

// memoryCollector reads /proc/self/smaps_rollup at each scrape.
type memoryCollector struct {
	self                  procfs.Proc
	anonymous, proportion *prometheus.Desc
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
			"Memory of the process backed by no file (heap, stacks, runtime), in bytes, from /proc/self/smaps_rollup.", nil, nil),
		proportion: prometheus.NewDesc(ProportionalMemory,
			"Resident memory of the process with each page shared with other processes divided among them (PSS), in bytes.", nil, nil),
	})
}

// Describe sends the two gauges' descriptions.
func (c *memoryCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.anonymous
	ch <- c.proportion
}

// Collect reads smaps_rollup; a failed read sends nothing.
func (c *memoryCollector) Collect(ch chan<- prometheus.Metric) {
	r, err := c.self.ProcSMapsRollup()
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.anonymous, prometheus.GaugeValue, float64(r.Anonymous))
	ch <- prometheus.MustNewConstMetric(c.proportion, prometheus.GaugeValue, float64(r.Pss))
}
