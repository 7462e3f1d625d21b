// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package inspect

import (
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// endpointKeys are the YAML DSL keys whose string value, or whose uri, is an
// endpoint URI: from, to and the EIPs that send to an endpoint (kebab-case too,
// which older Camel accepted).
var endpointKeys = map[string]bool{
	"from": true, "to": true, "toD": true, "to-d": true, "wireTap": true, "wire-tap": true,
	"enrich": true, "pollEnrich": true, "poll-enrich": true, "poll": true,
	"uri": true, "deadLetterUri": true, "dead-letter-uri": true,
	"interceptFrom": true, "interceptSendToEndpoint": true,
}

// opaqueKeys hold options, not routes: their keys and values are never read.
var opaqueKeys = map[string]bool{"parameters": true, "properties": true, "kamelet": true}

// kebabCaseKey is a DSL key as Camel 3 also wrote it: lower-case words joined by '-'.
var kebabCaseKey = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)+$`)

// yaml inspects a YAML DSL document (or one flow, which is JSON and so YAML).
func (in *inspection) yaml(data []byte) error {
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return err
	}
	in.yamlNode("", doc)
	return nil
}

// yamlNode inspects the value v of key, then every child below it.
func (in *inspection) yamlNode(key string, v any) {
	switch t := v.(type) {
	case string:
		switch {
		case key == "from":
			in.consumer(t, nil)
		case endpointKeys[key]:
			in.uri(t)
		case key == "language":
			in.language(t)
		}
	case []any:
		for _, el := range t {
			in.yamlNode(key, el)
		}
	case map[string]any:
		in.yamlMap(key, t)
	}
}

// yamlMap inspects a map: its keys name EIPs, expression languages and data formats.
func (in *inspection) yamlMap(key string, m map[string]any) {
	switch key {
	case "from":
		if u, ok := m["uri"].(string); ok {
			params, _ := m["parameters"].(map[string]any)
			in.consumer(u, params)
		}
	case "marshal", "unmarshal":
		for model, opts := range m {
			library, _ := lookup(opts, "library").(string)
			in.dataFormat(model, library)
		}
	case "enrich", "pollEnrich", "poll-enrich":
		// The endpoint is an expression; a constant one is a URI.
		if c, ok := constantExpression(m); ok {
			in.uri(c)
		}
	}
	for k, child := range m {
		if kebabCaseKey.MatchString(k) {
			in.kebab[k] = true
		}
		if k == "kamelet" {
			// The kamelet EIP: NAME[?OPTIONS], or {name: NAME, ...}.
			if spec, ok := child.(map[string]any); ok {
				child = spec["name"]
			}
			if name, ok := child.(string); ok {
				in.kamelet(name)
			}
		}
		if opaqueKeys[k] {
			continue
		}
		switch k {
		case "rest", "restConfiguration":
			in.rest()
		case "openApi":
			in.component("rest-openapi")
		case "bean":
			in.component("bean")
		default:
			in.language(k)
		}
		in.yamlNode(k, child)
	}
}

// constantExpression returns the value of a constant expression written under m
// (constant: X, or expression: {constant: X}, or constant: {expression: X}).
func constantExpression(m map[string]any) (string, bool) {
	c := m["constant"]
	if c == nil {
		c = lookup(m["expression"], "constant")
	}
	if s, ok := c.(string); ok {
		return s, true
	}
	s, ok := lookup(c, "expression").(string)
	return s, ok && strings.TrimSpace(s) != ""
}

// lookup returns v[key] when v is a map, else nil.
func lookup(v any, key string) any {
	if m, ok := v.(map[string]any); ok {
		return m[key]
	}
	return nil
}
