// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/trait"
)

func TestService(t *testing.T) {
	port := func(name string, port int32, target string) []corev1.ServicePort {
		return []corev1.ServicePort{{Name: name, Port: port, TargetPort: intstr.FromString(target), Protocol: corev1.ProtocolTCP}}
	}
	cases := []struct {
		name      string
		traits    string
		wantNone  bool
		wantType  corev1.ServiceType
		wantPorts []corev1.ServicePort
	}{
		{name: "an integration that exposes no port has no service", traits: `{}`, wantNone: true},
		{name: "a container port gets a ClusterIP service on port 80", traits: `{"container":{"port":8080}}`,
			wantType: corev1.ServiceTypeClusterIP, wantPorts: port("http", 80, "http")},
		{name: "an enabled service without a port gets one", traits: `{"service":{"enabled":true}}`,
			wantType: corev1.ServiceTypeClusterIP, wantPorts: port("http", 80, "http")},
		{name: "a disabled service is not rendered even with a port", traits: `{"container":{"port":8080},"service":{"enabled":false}}`,
			wantNone: true},
		{name: "the service trait sets the type", traits: `{"container":{"port":8080},"service":{"type":"LoadBalancer"}}`,
			wantType: corev1.ServiceTypeLoadBalancer, wantPorts: port("http", 80, "http")},
		{name: "the container trait names and numbers the ports",
			traits:   `{"container":{"port":9000,"portName":"api","servicePort":8443,"servicePortName":"https"}}`,
			wantType: corev1.ServiceTypeClusterIP, wantPorts: port("https", 8443, "api")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			svc, err := Service(input(t, tc.traits))
			g.Expect(err).NotTo(HaveOccurred())
			if tc.wantNone {
				g.Expect(svc).To(BeNil())
				return
			}
			g.Expect(svc.TypeMeta).To(Equal(metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}))
			g.Expect(svc.Name).To(Equal("hello"))
			g.Expect(svc.Spec.Type).To(Equal(tc.wantType))
			g.Expect(svc.Spec.Ports).To(Equal(tc.wantPorts))
			g.Expect(svc.Spec.Selector).To(Equal(map[string]string{camelv1.IntegrationLabel: "hello"}))
		})
	}
}

func TestTheServiceTraitsPortsLabelsAndNodePortAreCamelKs(t *testing.T) {
	g := NewWithT(t)
	in := input(t, `{"service":{"nodePort":true,"ports":["hello;85;8085","metrics;9000;9876;UDP"],"labels":{"team":"a"},
		"annotations":{"example.com/lb":"internal"}},"container":{"ports":["hello;8085"]}}`)
	svc, err := Service(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeNodePort), "nodePort asks for a NodePort Service")
	g.Expect(svc.Spec.Ports).To(Equal([]corev1.ServicePort{
		{Name: "hello", Port: 85, TargetPort: intstr.FromInt32(8085), Protocol: corev1.ProtocolTCP},
		{Name: "metrics", Port: 9000, TargetPort: intstr.FromInt32(9876), Protocol: corev1.ProtocolUDP}}),
		"ports alone give a Service, with those ports")
	g.Expect(svc.Labels).To(HaveKeyWithValue("team", "a"))
	g.Expect(svc.Annotations).To(HaveKeyWithValue("example.com/lb", "internal"))
	d := mustDeployment(t, in)
	g.Expect(d.Spec.Template.Spec.Containers[0].Ports).To(Equal([]corev1.ContainerPort{
		{Name: "hello", ContainerPort: 8085, Protocol: corev1.ProtocolTCP}}))
	var tree camelv1.Traits
	g.Expect(json.Unmarshal([]byte(`{"service":{"ports":["hello;85"]},"container":{"ports":["x;99999"]}}`), &tree)).To(Succeed())
	_, err = trait.Parse(tree)
	g.Expect(err).To(MatchError(And(ContainSubstring("trait service.ports[0]: must be name;port;containerPort[;protocol]"),
		ContainSubstring("trait container.ports[0]: must be name;port[;protocol]"))))
}
