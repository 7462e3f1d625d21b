// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// applyTemplate applies spec.template, Camel K's pod template, to pod as a
// strategic merge patch. The template is a PodTemplateSpec fragment
// ({spec: {...}}). Containers and initContainers merge by name, so a container
// named like the main one patches it. Keys of the template other than spec are
// ignored, as in Camel K.
func applyTemplate(pod corev1.PodTemplateSpec, tpl *camelv1.RawObject) (corev1.PodTemplateSpec, error) {
	if tpl == nil || isEmptyJSON(tpl.Raw) {
		return pod, nil
	}
	var fragment map[string]json.RawMessage
	if err := json.Unmarshal(tpl.Raw, &fragment); err != nil || fragment == nil {
		return pod, fmt.Errorf("spec.template: must be an object with a spec, got %s", shorten(tpl.Raw))
	}
	spec, ok := fragment["spec"]
	if !ok || isEmptyJSON(spec) {
		return pod, nil
	}
	var specObject map[string]json.RawMessage
	if err := json.Unmarshal(spec, &specObject); err != nil || specObject == nil {
		return pod, fmt.Errorf("spec.template.spec: must be an object (a pod spec), got %s", shorten(spec))
	}
	patch, err := json.Marshal(map[string]json.RawMessage{"spec": spec})
	if err != nil {
		return pod, fmt.Errorf("spec.template: %w", err)
	}
	original, err := json.Marshal(pod)
	if err != nil {
		return pod, fmt.Errorf("spec.template: %w", err)
	}
	merged, err := strategicpatch.StrategicMergePatch(original, patch, corev1.PodTemplateSpec{})
	if err != nil {
		return pod, fmt.Errorf("spec.template: cannot apply as a strategic merge patch: %w", err)
	}
	var out corev1.PodTemplateSpec
	if err := json.Unmarshal(merged, &out); err != nil {
		return pod, templateError(err)
	}
	return out, nil
}

// templateError names the field of a template value with the wrong type.
func templateError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return fmt.Errorf("spec.template.%s: must be %s, got %s", typeErr.Field, jsonKind(typeErr.Type), typeErr.Value)
	}
	return fmt.Errorf("spec.template: %w", err)
}

// jsonKind names the JSON value a Go type reads from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a " + t.String()
}

func isEmptyJSON(raw []byte) bool {
	s := string(bytes.TrimSpace(raw))
	return s == "" || s == "null"
}

// shorten prints a JSON value for an error message.
func shorten(raw []byte) string {
	var buf bytes.Buffer
	s := string(raw)
	if json.Compact(&buf, raw) == nil {
		s = buf.String()
	}
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return s
}
