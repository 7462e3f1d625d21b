// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/caravan-dev/caravan/internal/runtime"
)

// Environment variables the operator sets on the main container. The environment trait
// cannot set them: they carry the integration's identity and the runtime contract.
const (
	EnvIntegration = "CAMEL_K_INTEGRATION"
	EnvDigest      = "CAMEL_K_DIGEST"
	EnvConf        = "CAMEL_K_CONF"
	EnvConfD       = "CAMEL_K_CONF_D"
)

// ReservedEnvVars lists the variables the environment trait cannot set.
var ReservedEnvVars = []string{EnvIntegration, EnvDigest, EnvConf, EnvConfD}

// Camel is the camel trait: runtime properties and version. With enabled: false it reads
// as defaults.
type Camel struct {
	properties      []string
	runtimeVersion  string
	runtimeProvider runtime.Provider
}

func parseCamel(o *object) Camel {
	if o.disabled() {
		return Camel{}
	}
	c := Camel{runtimeVersion: strings.TrimSpace(o.str("runtimeVersion"))}
	if name := strings.TrimSpace(o.str("runtimeProvider")); name != "" {
		p, err := runtime.ProviderNamed(name)
		if err != nil {
			o.fail("runtimeProvider", err.Error(), json.RawMessage(strconv.Quote(name)))
		}
		c.runtimeProvider = p
	}
	if c.runtimeVersion != "" {
		// Without a provider here, the platform's decides: the integration's controller checks it.
		check := runtime.CheckVersionOfAny
		if c.runtimeProvider != nil {
			check = c.runtimeProvider.CheckVersion
		}
		if err := check(c.runtimeVersion); err != nil {
			o.fail("runtimeVersion", err.Error(), json.RawMessage(strconv.Quote(c.runtimeVersion)))
		}
	}
	for i, p := range o.strs("properties") {
		key, _, ok := strings.Cut(p, "=")
		if !ok || strings.TrimSpace(key) == "" {
			o.failItem("properties", i, "must be key=value", p)
			continue
		}
		c.properties = append(c.properties, p)
	}
	return c
}

// Properties are the camel.properties entries, key=value, in the order written.
func (c Camel) Properties() []string { return slices.Clone(c.properties) }

// RuntimeVersion is camel.runtimeVersion, or "".
func (c Camel) RuntimeVersion() string { return c.runtimeVersion }

// RuntimeProvider is the provider camel.runtimeProvider names, nil when it names none.
func (c Camel) RuntimeProvider() runtime.Provider { return c.runtimeProvider }

// Kamelets is the kamelets trait: which Kamelets are mounted with the sources. With auto (the
// default) those the routes use, plus those of list (comma-separated names); with enabled: false
// none, and the runtime looks for them on its classpath.
type Kamelets struct {
	disabled bool
	manual   bool
	list     []string
}

func parseKamelets(o *object) Kamelets {
	k := Kamelets{disabled: o.disabled()}
	if auto := o.boolean("auto"); auto != nil && !*auto {
		k.manual = true
	}
	for _, name := range strings.Split(o.str("list"), ",") {
		name, _, _ = strings.Cut(strings.TrimSpace(name), "?")
		if name == "" {
			continue
		}
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			o.fail("list", "must be Kamelet names separated by ','", json.RawMessage(strconv.Quote(name)))
			continue
		}
		k.list = append(k.list, name)
	}
	return k
}

// Mounted are the Kamelets to mount, given those the routes use: nil when the trait is off.
func (k Kamelets) Mounted(used []string) []string {
	if k.disabled {
		return nil
	}
	var out []string
	if !k.manual {
		out = append(out, used...)
	}
	for _, name := range k.list {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// Builder is the builder trait, in part: its properties (KEY=VALUE), which the kit's build gives
// Maven as -DKEY=VALUE, as Camel K gives its build. With enabled: false it reads as defaults.
type Builder struct {
	properties []string
	resources  map[string]string
}

// BuilderTask is the one task of Caravan's builder pod that the builder trait's task resources
// name, as Camel K's: its Maven container.
const BuilderTask = "builder"

// BuilderResource is one of the builder task's requests and limits: its key in Resources (Camel
// K's older single-value property of the same name), the per-task list property that sets it
// (TASK:QUANTITY), and the resource it bounds.
type BuilderResource struct {
	Key, TasksProperty string
	Limit              bool
	Name               corev1.ResourceName
}

// BuilderResources are the builder task's requests and limits the builder trait sets.
var BuilderResources = []BuilderResource{
	{Key: "requestCPU", TasksProperty: "tasksRequestCPU", Name: corev1.ResourceCPU},
	{Key: "requestMemory", TasksProperty: "tasksRequestMemory", Name: corev1.ResourceMemory},
	{Key: "limitCPU", TasksProperty: "tasksLimitCPU", Limit: true, Name: corev1.ResourceCPU},
	{Key: "limitMemory", TasksProperty: "tasksLimitMemory", Limit: true, Name: corev1.ResourceMemory},
}

func parseBuilder(o *object) Builder {
	if o.disabled() {
		return Builder{}
	}
	var b Builder
	for i, p := range o.strs("properties") {
		key, _, ok := strings.Cut(p, "=")
		if !ok || strings.TrimSpace(key) == "" || strings.ContainsAny(key, " \t") || strings.ContainsAny(p, "\n\r") {
			o.failItem("properties", i, "must be KEY=VALUE, one line", p)
			continue
		}
		b.properties = append(b.properties, p)
	}
	if raw, ok := o.value("mavenProfiles"); ok && len(o.strs("mavenProfiles")) > 0 {
		o.fail("mavenProfiles", "must be empty: Caravan's builds take Maven profiles from the platform's Maven settings "+
			"(the settings.xml spec.build.maven.settings names, active by activeProfiles)", raw)
	}
	for _, r := range BuilderResources {
		b.setResource(o, r.Key, r.Key, o.str(r.Key))
		for i, entry := range o.strs(r.TasksProperty) {
			task, quantity, ok := strings.Cut(entry, ":")
			if !ok || task != BuilderTask {
				o.failItem(r.TasksProperty, i, "must be builder:QUANTITY: Caravan's builder pod runs one task, builder, whose Maven container it sizes", entry)
				continue
			}
			b.setResource(o, r.Key, r.TasksProperty, quantity)
		}
	}
	return b
}

// setResource records quantity, when given, as the builder task's resource key, read from property.
func (b *Builder) setResource(o *object, key, property, quantity string) {
	if quantity == "" {
		return
	}
	if _, err := resource.ParseQuantity(quantity); err != nil {
		raw, _ := json.Marshal(quantity)
		o.fail(property, "must be a quantity such as 500m or 1Gi", raw)
		return
	}
	if b.resources == nil {
		b.resources = map[string]string{}
	}
	b.resources[key] = quantity
}

// Properties are builder.properties, KEY=VALUE, in the order written.
func (b Builder) Properties() []string { return slices.Clone(b.properties) }

// Resources are the builder task's requests and limits the trait sets (requestCPU, requestMemory,
// limitCPU, limitMemory), nil without any.
func (b Builder) Resources() map[string]string { return maps.Clone(b.resources) }

// Environment is the environment trait: extra variables of the main container, the pod's
// name and namespace (containerMeta) and the operator's proxies (httpProxy), both on by
// default. With enabled: false it reads as defaults.
type Environment struct {
	vars                     []corev1.EnvVar
	noContainerMeta, noProxy bool
}

func parseEnvironment(o *object) Environment {
	if o.disabled() {
		return Environment{}
	}
	var e Environment
	e.noContainerMeta = isFalse(o.boolean("containerMeta"))
	e.noProxy = isFalse(o.boolean("httpProxy"))
	for i, v := range o.strs("vars") {
		name, value, ok := strings.Cut(v, "=")
		switch {
		case !ok || name == "" || len(validation.IsRelaxedEnvVarName(name)) > 0:
			o.failItem("vars", i, "must be NAME=value with a valid variable name", v)
		case slices.Contains(ReservedEnvVars, name):
			o.failItem("vars", i, "must not set "+name+", which the operator sets", v)
		default:
			from, err := valueFrom(value)
			if err != nil {
				o.failItem("vars", i, err.Error(), v)
				continue
			}
			if from != nil {
				value = ""
			}
			e.set(corev1.EnvVar{Name: name, Value: value, ValueFrom: from})
		}
	}
	return e
}

func isFalse(b *bool) bool { return b != nil && !*b }

// valueFrom reads a value written configmap:NAME/KEY or secret:NAME/KEY as the key it
// names, as Camel K does; nil for any other value.
func valueFrom(value string) (*corev1.EnvVarSource, error) {
	kind, ref, ok := strings.Cut(value, ":")
	if !ok || (kind != "configmap" && kind != "secret") {
		return nil, nil
	}
	name, key, ok := strings.Cut(ref, "/")
	if !ok || len(validation.IsDNS1123Subdomain(name)) > 0 || len(validation.IsConfigMapKey(key)) > 0 {
		return nil, fmt.Errorf("must take its value from %s:NAME/KEY, a key of a %s of the integration's namespace", kind, map[string]string{"configmap": "ConfigMap", "secret": "Secret"}[kind])
	}
	obj := corev1.LocalObjectReference{Name: name}
	if kind == "configmap" {
		return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: obj, Key: key}}, nil
	}
	return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: obj, Key: key}}, nil
}

// set adds a variable; a name written twice keeps its first place and its last value.
func (e *Environment) set(v corev1.EnvVar) {
	i := slices.IndexFunc(e.vars, func(have corev1.EnvVar) bool { return have.Name == v.Name })
	if i >= 0 {
		e.vars[i] = v
		return
	}
	e.vars = append(e.vars, v)
}

// Vars are the environment.vars entries as variables, in the order written, without
// duplicate names.
func (e Environment) Vars() []corev1.EnvVar { return slices.Clone(e.vars) }

// ContainerMeta tells whether the container gets NAMESPACE and POD_NAME from the downward API.
func (e Environment) ContainerMeta() bool { return !e.noContainerMeta }

// HTTPProxy tells whether the container gets the operator's HTTP_PROXY, HTTPS_PROXY and NO_PROXY.
func (e Environment) HTTPProxy() bool { return !e.noProxy }

// failItem records that item i of the list key holds s where expected was wanted.
func (o *object) failItem(key string, i int, expected, s string) {
	raw, _ := json.Marshal(s)
	o.fail(fmt.Sprintf("%s[%d]", key, i), expected, raw)
}
