// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Ingress is the ingress trait, as in Camel K. An Ingress routes host (any host when unset)
// and paths (default "/", pathType Prefix) to the integration's Service, with the annotations,
// ingressClassName, and TLS for tlsHosts from tlsSecretName. It is made with enabled: true,
// or, enabled unset and auto not false, for every integration that gets a Service.
type Ingress struct {
	enabled, auto *bool
	host          string
	paths         []string
	pathType      networkingv1.PathType
	className     string
	annotations   map[string]string
	tlsHosts      []string
	tlsSecret     string
}

func parseIngress(o *object) Ingress {
	enabled := o.boolean("enabled")
	if enabled != nil && !*enabled {
		return Ingress{enabled: enabled}
	}
	in := Ingress{enabled: enabled, auto: o.boolean("auto"), host: o.str("host"), className: o.str("ingressClassName"),
		tlsHosts: o.strs("tlsHosts"), tlsSecret: o.str("tlsSecretName"),
		pathType: networkingv1.PathType(o.oneOf("pathType", string(networkingv1.PathTypePrefix),
			string(networkingv1.PathTypeExact), string(networkingv1.PathTypeImplementationSpecific)))}
	// paths, and path, which Camel K keeps for compatibility, after them.
	for _, key := range []string{"paths", "path"} {
		var paths []string
		if key == "paths" {
			paths = o.strs(key)
		} else if p := o.str(key); p != "" {
			paths = []string{p}
		}
		for _, p := range paths {
			if !strings.HasPrefix(p, "/") {
				raw, _ := o.value(key)
				o.fail(key, "must start with /", raw)
				break
			}
			if !slices.Contains(in.paths, p) {
				in.paths = append(in.paths, p)
			}
		}
	}
	if len(in.paths) == 0 {
		in.paths = []string{"/"}
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

// Auto is ingress.auto, true by default. See Traits.ExposesIngress.
func (in Ingress) Auto() bool { return in.auto == nil || *in.auto }

// Explicit tells whether ingress.enabled is true.
func (in Ingress) Explicit() bool { return in.enabled != nil && *in.enabled }

// Rule is the Ingress's host, paths and path type.
func (in Ingress) Rule() (host string, paths []string, pathType networkingv1.PathType) {
	return in.host, slices.Clone(in.paths), in.pathType
}

// Class is ingressClassName, or "".
func (in Ingress) Class() string { return in.className }

// Annotations are the Ingress's annotations.
func (in Ingress) Annotations() map[string]string { return in.annotations }

// TLS is the Ingress's TLS hosts and Secret; none without tlsHosts.
func (in Ingress) TLS() (hosts []string, secret string) { return in.tlsHosts, in.tlsSecret }
