// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	"testing"

	. "github.com/onsi/gomega"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

func TestThePrometheusTraitsPodMonitorScrapesTheContainersNamedPort(t *testing.T) {
	g := NewWithT(t)
	in := input(t, `{"prometheus":{"enabled":true,"podMonitorLabels":["release=monitoring"]},"container":{"port":9090,"portName":"metrics"}}`)

	pm, err := PodMonitor(in)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pm.GroupVersionKind()).To(Equal(PodMonitorGVK))
	g.Expect(pm.GetName()).To(Equal("hello"))
	g.Expect(pm.GetNamespace()).To(Equal("ns"))
	g.Expect(pm.GetLabels()).To(And(HaveKeyWithValue("release", "monitoring"),
		HaveKeyWithValue(camelv1.OperatorIDLabel, "tenant-a"), HaveKey(AppliedHashLabel)))
	g.Expect(pm.GetOwnerReferences()).To(ConsistOf(HaveField("Controller", ptr(true))))
	g.Expect(pm.Object["spec"]).To(Equal(map[string]any{
		"selector":            map[string]any{"matchLabels": map[string]any{camelv1.IntegrationLabel: "hello"}},
		"podMetricsEndpoints": []any{map[string]any{"port": "prometheus", "path": "/observe/metrics"}},
	}))
	d, err := Deployment(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d.Spec.Template.Spec.Containers[0].Ports).To(ContainElement(And(HaveField("Name", "prometheus"), HaveField("ContainerPort", int32(9876)))),
		"the port it scrapes, the runtime's management port, is declared")
}

func TestNoPodMonitorIsMadeUnlessThePrometheusTraitAsksForOne(t *testing.T) {
	for name, traits := range map[string]string{
		"without the trait":          `{}`,
		"with the trait not enabled": `{"prometheus":{"podMonitor":true}}`,
		"with podMonitor false":      `{"prometheus":{"enabled":true,"podMonitor":false}}`,
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			pm, err := PodMonitor(input(t, traits))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pm).To(BeNil())
		})
	}
}
