// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	"errors"
	"maps"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ErrIngressWithoutService is the error of an ingress trait on an integration that
// exposes no port.
var ErrIngressWithoutService = errors.New("trait ingress: the integration exposes no port for the Ingress to route to: " +
	"set container.port, or service.enabled=true")

// Ingress renders the Ingress <integration> of the ingress trait, routing to the
// integration's Service, or nil when the trait is off.
func Ingress(in Input) (*networkingv1.Ingress, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	t := in.Traits
	if !t.ExposesIngress() {
		return nil, nil
	}
	if !t.ExposesService() {
		return nil, ErrIngressWithoutService
	}
	name := in.Integration.Name
	host, paths, pathType := t.Ingress.Rule()
	backend := networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
		Name: name, Port: networkingv1.ServiceBackendPort{Name: t.Container.ServicePortName()}}}
	rulePaths := make([]networkingv1.HTTPIngressPath, len(paths))
	for i, p := range paths {
		rulePaths[i] = networkingv1.HTTPIngressPath{Path: p, PathType: &pathType, Backend: backend}
	}
	meta := in.objectMeta(name)
	if a := t.Ingress.Annotations(); len(a) > 0 {
		if meta.Annotations == nil {
			meta.Annotations = map[string]string{}
		}
		maps.Copy(meta.Annotations, a)
	}
	ing := &networkingv1.Ingress{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "Ingress"},
		ObjectMeta: meta,
		Spec: networkingv1.IngressSpec{
			Rules: []networkingv1.IngressRule{{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{
				HTTP: &networkingv1.HTTPIngressRuleValue{Paths: rulePaths}}}},
		},
	}
	if c := t.Ingress.Class(); c != "" {
		ing.Spec.IngressClassName = &c
	}
	if hosts, secret := t.Ingress.TLS(); len(hosts) > 0 {
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: hosts, SecretName: secret}}
	}
	stampHash(ing)
	return ing, nil
}
