// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
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
	properties     []string
	runtimeVersion string
}

func parseCamel(o *object) Camel {
	if o.disabled() {
		return Camel{}
	}
	c := Camel{runtimeVersion: o.str("runtimeVersion")}
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

// Environment is the environment trait: extra variables of the main container. With
// enabled: false it reads as defaults.
type Environment struct {
	vars []corev1.EnvVar
}

func parseEnvironment(o *object) Environment {
	if o.disabled() {
		return Environment{}
	}
	var e Environment
	for i, v := range o.strs("vars") {
		name, value, ok := strings.Cut(v, "=")
		switch {
		case !ok || name == "" || len(validation.IsRelaxedEnvVarName(name)) > 0:
			o.failItem("vars", i, "must be NAME=value with a valid variable name", v)
		case slices.Contains(ReservedEnvVars, name):
			o.failItem("vars", i, "must not set "+name+", which the operator sets", v)
		default:
			e.set(name, value)
		}
	}
	return e
}

// set adds a variable; a name written twice keeps its first place and its last value.
func (e *Environment) set(name, value string) {
	i := slices.IndexFunc(e.vars, func(v corev1.EnvVar) bool { return v.Name == name })
	if i >= 0 {
		e.vars[i].Value = value
		return
	}
	e.vars = append(e.vars, corev1.EnvVar{Name: name, Value: value})
}

// Vars are the environment.vars entries as variables, in the order written, without
// duplicate names.
func (e Environment) Vars() []corev1.EnvVar { return slices.Clone(e.vars) }

// failItem records that item i of the list key holds s where expected was wanted.
func (o *object) failItem(key string, i int, expected, s string) {
	raw, _ := json.Marshal(s)
	o.fail(fmt.Sprintf("%s[%d]", key, i), expected, raw)
}
