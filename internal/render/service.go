// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Service renders the Service <integration>, or returns nil, nil when the integration
// exposes no port (see trait.Traits.ExposesService). It has the service trait's type
// (ClusterIP by default), labels and annotations, routes container.servicePort to the container
// port named container.portName, and has the service trait's ports.
func Service(in Input) (*corev1.Service, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	t := in.Traits
	if !t.ExposesService() {
		return nil, nil
	}
	name := in.Integration.Name
	var ports []corev1.ServicePort
	if t.ContainerPort() != 0 {
		ports = append(ports, corev1.ServicePort{
			Name:       t.Container.ServicePortName(),
			Port:       t.Container.ServicePort(),
			TargetPort: intstr.FromString(t.Container.PortName()),
			Protocol:   corev1.ProtocolTCP,
		})
	}
	meta := in.objectMeta(name)
	meta.Labels = mergeInto(meta.Labels, t.Service.Labels())
	meta.Annotations = mergeInto(meta.Annotations, t.Service.Annotations())
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Type:     t.Service.Type(),
			Selector: Selector(name),
			Ports:    append(ports, t.Service.Ports()...),
		},
	}
	stampHash(svc)
	return svc, nil
}

// mergeInto adds extra's entries to m, which are not allowed to replace m's (the operator's).
func mergeInto(m, extra map[string]string) map[string]string {
	if len(extra) == 0 {
		return m
	}
	out := map[string]string{}
	for k, v := range extra {
		out[k] = v
	}
	for k, v := range m {
		out[k] = v
	}
	return out
}
