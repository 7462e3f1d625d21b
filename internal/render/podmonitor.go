// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// PodMonitorGVK is the Prometheus Operator's PodMonitor, which the prometheus trait makes.
var PodMonitorGVK = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "PodMonitor"}

// PodMonitor renders the PodMonitor <integration> of the prometheus trait, which scrapes
// the integration's pods on the runtime's metrics port and path, or nil
// when the trait makes none. It is unstructured: Caravan does not link the Prometheus
// Operator's types.
func PodMonitor(in Input) (*unstructured.Unstructured, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	if !in.Traits.Prometheus.PodMonitor() {
		return nil, nil
	}
	name := in.Integration.Name
	meta := in.objectMeta(name)
	labels := in.Traits.Prometheus.PodMonitorLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, meta.Labels)
	meta.Labels = labels
	metaMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&meta)
	if err != nil {
		return nil, err
	}
	selector := map[string]any{}
	for k, v := range Selector(name) {
		selector[k] = v
	}
	pm := &unstructured.Unstructured{Object: map[string]any{
		"metadata": metaMap,
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": selector},
			"podMetricsEndpoints": []any{map[string]any{
				"port": in.metricsPortName(),
				"path": in.provider().Metrics().Path,
			}},
		},
	}}
	pm.SetGroupVersionKind(PodMonitorGVK)
	stampHash(pm)
	return pm, nil
}
