// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Service renders the Service <integration>, or returns nil, nil when the integration
// exposes no port (see trait.Traits.ExposesService). It has the service trait's type
// (ClusterIP by default) and routes container.servicePort to the container port named
// container.portName.
func Service(in Input) (*corev1.Service, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	t := in.Traits
	if !t.ExposesService() {
		return nil, nil
	}
	name := in.Integration.Name
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: in.objectMeta(name),
		Spec: corev1.ServiceSpec{
			Type:     t.Service.Type(),
			Selector: Selector(name),
			Ports: []corev1.ServicePort{{
				Name:       t.Container.ServicePortName(),
				Port:       t.Container.ServicePort(),
				TargetPort: intstr.FromString(t.Container.PortName()),
				Protocol:   corev1.ProtocolTCP,
			}},
		},
	}
	stampHash(svc)
	return svc, nil
}
