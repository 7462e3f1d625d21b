// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Ingress is the ingress trait, as in Camel K. With enabled: true an Ingress routes host
// (any host when unset) and path (default "/", pathType Prefix) to the integration's
// Service, with the annotations, ingressClassName, and TLS for tlsHosts from
// tlsSecretName.
type Ingress struct {
	enabled     bool
	host, path  string
	pathType    networkingv1.PathType
	className   string
	annotations map[string]string
	tlsHosts    []string
	tlsSecret   string
}

func parseIngress(o *object) Ingress {
	enabled := o.boolean("enabled")
	if enabled == nil || !*enabled {
		return Ingress{}
	}
	in := Ingress{enabled: true, host: o.str("host"), path: o.str("path"), className: o.str("ingressClassName"),
		tlsHosts: o.strs("tlsHosts"), tlsSecret: o.str("tlsSecretName"),
		pathType: networkingv1.PathType(o.oneOf("pathType", string(networkingv1.PathTypePrefix),
			string(networkingv1.PathTypeExact), string(networkingv1.PathTypeImplementationSpecific)))}
	if in.path == "" {
		in.path = "/"
	} else if !strings.HasPrefix(in.path, "/") {
		raw, _ := o.value("path")
		o.fail("path", "must start with /", raw)
	}
	if in.pathType == "" {
		in.pathType = networkingv1.PathTypePrefix
	}
	for _, h := range append([]string{in.host}, in.tlsHosts...) {
		if h != "" && len(validation.IsDNS1123Subdomain(strings.TrimPrefix(h, "*."))) > 0 {
			raw, _ := o.value("host")
			o.fail("host", "must be a host name", raw)
			break
		}
	}
	in.annotations = o.stringMap("annotations")
	for k := range in.annotations {
		if len(validation.IsQualifiedName(k)) > 0 {
			raw, _ := o.value("annotations")
			o.fail("annotations", "must have valid annotation keys", raw)
			break
		}
	}
	return in
}

// Enabled tells whether the integration gets an Ingress.
func (in Ingress) Enabled() bool { return in.enabled }

// Rule is the Ingress's host, path and path type.
func (in Ingress) Rule() (host, path string, pathType networkingv1.PathType) {
	return in.host, in.path, in.pathType
}

// Class is ingressClassName, or "".
func (in Ingress) Class() string { return in.className }

// Annotations are the Ingress's annotations.
func (in Ingress) Annotations() map[string]string { return in.annotations }

// TLS is the Ingress's TLS hosts and Secret; none without tlsHosts.
func (in Ingress) TLS() (hosts []string, secret string) { return in.tlsHosts, in.tlsSecret }
