// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

// Package kamelet checks Kamelets and resolves the properties a binding gives them. It is
// pure: no API calls, no controller-runtime.
//
// Caravan's rules, close to Camel K's:
//   - The name is a DNS-1123 label (lowercase letters, digits and '-', at most 63
//     characters) and not "source" or "sink", which kamelet:source and kamelet:sink reserve.
//     Camel K accepts any object name; Caravan refuses dots because the name is a segment
//     of the runtime property keys camel.kamelet.<name>.<id>.<property> and of the source
//     file <name>.kamelet.yaml, where a dot would change their meaning.
//   - The camel.apache.org/kamelet.type label, when present, is source, sink or action.
//   - Each property of spec.definition has a type among Types and a default of that type;
//     required names defined properties; no property is named "id" (Camel K reserves it
//     to name a Kamelet instance in a binding).
//   - spec.template is a YAML DSL route template: an object with from.uri set. A source
//     reads from anything but kamelet:source and sends to kamelet:sink; a sink and an
//     action read from kamelet:source. An action need not send to kamelet:sink: like the
//     actions of the Apache Camel Kamelet catalog, it returns its result to the caller.
package kamelet

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// Reasons of the problems Validate reports, usable as condition reasons.
const (
	ReasonInvalidName     = "InvalidName"
	ReasonInvalidProperty = "InvalidProperty"
	ReasonInvalidTemplate = "InvalidTemplate"
)

// The endpoints a Kamelet template connects to its callers.
const (
	SourceURI = "kamelet:source"
	SinkURI   = "kamelet:sink"
)

// reservedNames cannot name a Kamelet: the kamelet component gives them a meaning.
var reservedNames = []string{"source", "sink"}

// Problem is one reason a Kamelet cannot be used, with a message saying what to fix.
type Problem struct {
	Reason  string
	Message string
}

// Validate returns the problems of a Kamelet, in a stable order; none means it is usable.
func Validate(k *camelv1.Kamelet) []Problem {
	if k == nil {
		return []Problem{{ReasonInvalidName, "the Kamelet is missing"}}
	}
	var out []Problem
	out = append(out, checkName(k)...)
	out = append(out, checkProperties(k)...)
	out = append(out, checkTemplate(k)...)
	return out
}

// Type is the value of the camel.apache.org/kamelet.type label, or "" when unset.
func Type(k *camelv1.Kamelet) string { return k.Labels[camelv1.KameletTypeLabel] }

func checkName(k *camelv1.Kamelet) []Problem {
	var out []Problem
	if errs := validation.IsDNS1123Label(k.Name); len(errs) > 0 {
		out = append(out, Problem{ReasonInvalidName, fmt.Sprintf(
			"name %q: use lowercase letters, digits and '-' only, at most 63 characters (it is part of property keys and file names): %s",
			k.Name, strings.Join(errs, "; "))})
	}
	if slices.Contains(reservedNames, k.Name) {
		out = append(out, Problem{ReasonInvalidName, fmt.Sprintf(
			"name %q is reserved by kamelet:%s: choose another name", k.Name, k.Name)})
	}
	types := []string{camelv1.KameletTypeSource, camelv1.KameletTypeSink, camelv1.KameletTypeAction}
	if t, ok := k.Labels[camelv1.KameletTypeLabel]; ok && !slices.Contains(types, t) {
		out = append(out, Problem{ReasonInvalidName, fmt.Sprintf(
			"label %s is %q: set it to source, sink or action", camelv1.KameletTypeLabel, t)})
	}
	return out
}

func checkProperties(k *camelv1.Kamelet) []Problem {
	props, required, err := Properties(k)
	if err != nil {
		return []Problem{{ReasonInvalidProperty, err.Error()}}
	}
	var out []Problem
	bad := func(format string, args ...any) {
		out = append(out, Problem{ReasonInvalidProperty, fmt.Sprintf(format, args...)})
	}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		p := props[name]
		switch {
		case name == IDProperty:
			bad("property %q: the name is reserved to name a Kamelet instance in a binding: rename the property", name)
		case p.Type == "":
			bad("property %q: set type to one of %s", name, strings.Join(Types, ", "))
		case !slices.Contains(Types, p.Type):
			bad("property %q: type %q is unknown: use one of %s", name, p.Type, strings.Join(Types, ", "))
		case p.HasDefault():
			if _, err := rawString(p.Type, p.Default); err != nil {
				bad("property %q: the default %s does not match type %s: %v", name, p.Default, p.Type, err)
			}
		}
	}
	for _, name := range required {
		if _, ok := props[name]; !ok {
			bad("required property %q is not defined: add it to spec.definition.properties or remove it from required", name)
		}
	}
	return out
}

func checkTemplate(k *camelv1.Kamelet) []Problem {
	bad := func(format string, args ...any) []Problem {
		return []Problem{{ReasonInvalidTemplate, fmt.Sprintf(format, args...)}}
	}
	if k.Spec.Template == nil || len(k.Spec.Template.Raw) == 0 || isNull(k.Spec.Template.Raw) {
		return bad("spec.template is missing: write the route template in the YAML DSL, starting with from.uri")
	}
	var tmpl struct {
		From map[string]json.RawMessage `json:"from"`
	}
	if err := json.Unmarshal(k.Spec.Template.Raw, &tmpl); err != nil {
		return bad("spec.template must be an object with from: %v", err)
	}
	var from string
	if raw, ok := tmpl.From["uri"]; !ok || json.Unmarshal(raw, &from) != nil || from == "" {
		return bad("spec.template.from.uri must be set: the endpoint the template consumes from (kamelet:source for a sink or an action)")
	}
	readsSource := endpointIs(from, SourceURI)
	sendsSink := mentions(tmpl.From["steps"], SinkURI)
	switch Type(k) {
	case camelv1.KameletTypeSource:
		if readsSource {
			return bad("spec.template.from.uri is kamelet:source but the Kamelet is a source: consume from the system it reads (for example timer:tick)")
		}
		if !sendsSink {
			return bad("spec.template of a source Kamelet must send to kamelet:sink: add a step \"to: kamelet:sink\"")
		}
	case camelv1.KameletTypeSink, camelv1.KameletTypeAction:
		if !readsSource {
			return bad("spec.template.from.uri must be kamelet:source for a %s Kamelet, got %q", Type(k), from)
		}
	default:
		if !readsSource && !sendsSink {
			return bad("spec.template must read from kamelet:source or send to kamelet:sink; set label %s to say which", camelv1.KameletTypeLabel)
		}
	}
	return nil
}

// endpointIs tells whether uri is the endpoint base, possibly with options (base?x=y).
func endpointIs(uri, base string) bool {
	return uri == base || strings.HasPrefix(uri, base+"?")
}

// mentions tells whether the JSON tree raw holds a string that is the endpoint base.
func mentions(raw json.RawMessage, base string) bool {
	if len(raw) == 0 {
		return false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch t := v.(type) {
		case string:
			return endpointIs(t, base)
		case []any:
			return slices.ContainsFunc(t, walk)
		case map[string]any:
			for _, e := range t {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}
