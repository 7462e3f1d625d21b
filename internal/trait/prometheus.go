// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

// MetricsPath is where Camel K's runtimes serve their Prometheus metrics.
const MetricsPath = "/q/metrics"

// Prometheus is the prometheus trait, in part: with enabled: true the pods carry the
// prometheus.io/scrape, /port and /path annotations that annotation-based scraping reads,
// on the container's port (DefaultPort when it sets none). Camel K's PodMonitor
// (podMonitor, podMonitorLabels) is not made.
type Prometheus struct {
	enabled bool
}

func parsePrometheus(o *object) Prometheus {
	enabled := o.boolean("enabled")
	o.boolean("podMonitor")
	o.strs("podMonitorLabels")
	return Prometheus{enabled: enabled != nil && *enabled}
}

// Enabled tells whether the pods are to be scraped.
func (p Prometheus) Enabled() bool { return p.enabled }
