// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

// Package trait reads the Camel K traits Caravan acts on, with Camel K's field names.
// It reads them from the trait trees of an Integration or a platform: container, camel,
// environment, service, deployment, mount, health, affinity, toleration, owner, pdb, ingress,
// jvm, pull-secret, cron and prometheus in part. Other traits, and unknown fields of the traits read here, are
// ignored: the API keeps them as written. A present field with a wrong type or an invalid
// value is an error naming the trait, the field and what is expected.
package trait

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// DefaultPort is the container port used when the service trait is enabled and the
// container trait sets no port.
const DefaultPort int32 = 8080

// Traits are the parsed traits Caravan acts on. Build them with Parse; the zero value
// reads like an integration without traits (every accessor returns its default).
type Traits struct {
	Container   Container
	Camel       Camel
	Environment Environment
	Service     Service
	Deployment  Deployment
	Mount       Mount
	Health      Health
	Affinity    Affinity
	Toleration  Toleration
	Owner       Owner
	Prometheus  Prometheus
	PDB         PDB
	JVM         JVM
	Ingress     Ingress
	PullSecret  PullSecret
	Cron        Cron
	Builder     Builder
	Kamelets    Kamelets

	// httpRoutes tells whether the routes serve HTTP; see WithHTTPRoutes.
	httpRoutes bool
}

// WithHTTPRoutes returns t for routes that serve HTTP (a platform-http or rest consumer, or the
// REST DSL) or not, which the service and ingress traits' auto modes follow.
func (t Traits) WithHTTPRoutes(serve bool) Traits {
	t.httpRoutes = serve
	return t
}

// Parse reads the traits Caravan acts on. It returns every field error, joined; on error
// the returned Traits are the zero value.
func Parse(t camelv1.Traits) (Traits, error) {
	var out Traits
	var errs []error
	read := func(name string, parse func(*object)) {
		o := open(t, name)
		if len(o.errs) == 0 {
			parse(o)
		}
		errs = append(errs, o.errs...)
	}
	read("container", func(o *object) { out.Container = parseContainer(o) })
	read("camel", func(o *object) { out.Camel = parseCamel(o) })
	read("environment", func(o *object) { out.Environment = parseEnvironment(o) })
	read("service", func(o *object) { out.Service = parseService(o) })
	read("deployment", func(o *object) { out.Deployment = parseDeployment(o) })
	read("mount", func(o *object) { out.Mount = parseMount(o) })
	read("health", func(o *object) { out.Health = parseHealth(o) })
	read("affinity", func(o *object) { out.Affinity = parseAffinity(o) })
	read("toleration", func(o *object) { out.Toleration = parseToleration(o) })
	read("owner", func(o *object) { out.Owner = parseOwner(o) })
	read("prometheus", func(o *object) { out.Prometheus = parsePrometheus(o) })
	read("pdb", func(o *object) { out.PDB = parsePDB(o) })
	read("jvm", func(o *object) { out.JVM = parseJVM(o) })
	read("ingress", func(o *object) { out.Ingress = parseIngress(o) })
	read("pull-secret", func(o *object) { out.PullSecret = parsePullSecret(o) })
	read("cron", func(o *object) { out.Cron = parseCron(o) })
	read("builder", func(o *object) { out.Builder = parseBuilder(o) })
	read("kamelets", func(o *object) { out.Kamelets = parseKamelets(o) })
	if err := errors.Join(errs...); err != nil {
		return Traits{}, err
	}
	return out, nil
}

// ContainerPort is the port the main container exposes: container.port, else DefaultPort
// when service.enabled is true or, unset, when service.auto finds routes that serve HTTP, else
// 0 (no port).
func (t Traits) ContainerPort() int32 {
	if p := t.Container.Port(); p != 0 {
		return p
	}
	e := t.Service.Enabled()
	if (e != nil && *e) || (e == nil && t.Service.Auto() && t.httpRoutes) {
		return DefaultPort
	}
	return 0
}

// ExposesIngress tells whether the integration gets an Ingress: ingress.enabled, else, unless
// ingress.auto is false, when it gets a Service, as Camel K does on Kubernetes.
func (t Traits) ExposesIngress() bool {
	if e := t.Ingress.enabled; e != nil {
		return *e
	}
	return t.Ingress.Auto() && t.ExposesService()
}

// ExposesService tells whether the integration gets a Service: it exposes a port, or the service
// trait names ports, and the service trait is not disabled.
func (t Traits) ExposesService() bool {
	e := t.Service.Enabled()
	return (t.ContainerPort() != 0 || len(t.Service.Ports()) > 0) && (e == nil || *e)
}

// Merge layers integration traits over platform defaults. For a trait set on both sides
// the integration's top-level keys replace the platform's, key by key (a shallow merge);
// a trait that is not an object on either side is taken from the integration as written.
// The inputs are not modified.
func Merge(platform, integration camelv1.Traits) camelv1.Traits {
	if len(platform) == 0 && len(integration) == 0 {
		return nil
	}
	out := make(camelv1.Traits, len(platform)+len(integration))
	for name, raw := range platform {
		out[name] = cloneRaw(raw)
	}
	for _, name := range slices.Sorted(maps.Keys(integration)) {
		over := integration[name]
		base, ok := out[name]
		switch {
		case !ok:
			out[name] = cloneRaw(over)
		case len(over.Raw) == 0 || isNull(over.Raw):
			// An empty integration trait keeps the platform's defaults.
		default:
			out[name] = mergeObject(base, over)
		}
	}
	return out
}

// mergeObject returns base with the top-level keys of over replacing its own.
func mergeObject(base, over camelv1.RawObject) camelv1.RawObject {
	var b, o map[string]json.RawMessage
	if json.Unmarshal(base.Raw, &b) != nil || json.Unmarshal(over.Raw, &o) != nil || b == nil || o == nil {
		return cloneRaw(over)
	}
	maps.Copy(b, o)
	raw, err := json.Marshal(b)
	if err != nil {
		return cloneRaw(over)
	}
	return rawObject(raw)
}

func cloneRaw(r camelv1.RawObject) camelv1.RawObject {
	return rawObject(slices.Clone(r.Raw))
}

func rawObject(raw []byte) camelv1.RawObject {
	var r camelv1.RawObject
	r.Raw = raw
	return r
}
