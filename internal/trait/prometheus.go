// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Prometheus is the prometheus trait: with enabled: true the runtime serves Prometheus metrics
// and the pods carry the annotations that annotation-based scraping reads (prometheus.io/scrape,
// /port and /path, where the runtime serves them). Unless podMonitor is false, a
// PodMonitor of the Prometheus Operator, labelled with podMonitorLabels, also selects
// them, where the cluster serves that kind.
type Prometheus struct {
	enabled    bool
	podMonitor bool
	labels     map[string]string
}

func parsePrometheus(o *object) Prometheus {
	enabled := o.boolean("enabled")
	p := Prometheus{enabled: enabled != nil && *enabled, podMonitor: true}
	if pm := o.boolean("podMonitor"); pm != nil {
		p.podMonitor = *pm
	}
	for i, l := range o.strs("podMonitorLabels") {
		key, value, ok := strings.Cut(l, "=")
		switch {
		case !ok || len(validation.IsQualifiedName(key)) > 0 || len(validation.IsValidLabelValue(value)) > 0:
			o.failItem("podMonitorLabels", i, "must be key=value with a valid label key and value", l)
		case strings.HasPrefix(key, "camel.apache.org/"):
			o.failItem("podMonitorLabels", i, "must not name a camel.apache.org/ key, which the operator sets", l)
		default:
			if p.labels == nil {
				p.labels = map[string]string{}
			}
			p.labels[key] = value
		}
	}
	return p
}

// Enabled tells whether the pods are to be scraped.
func (p Prometheus) Enabled() bool { return p.enabled }

// PodMonitor tells whether a PodMonitor is to select the pods: the trait is enabled and
// podMonitor is not false.
func (p Prometheus) PodMonitor() bool { return p.enabled && p.podMonitor }

// PodMonitorLabels are the labels podMonitorLabels gives the PodMonitor, or nil.
func (p Prometheus) PodMonitorLabels() map[string]string { return maps.Clone(p.labels) }
