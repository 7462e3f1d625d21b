// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// object reads the top-level keys of one trait, collecting an error for each key that is
// present with a wrong type or an invalid value. Absent and null keys read as unset.
type object struct {
	trait string
	keys  map[string]json.RawMessage
	errs  []error
}

// open reads the trait named name from t. A missing or null trait reads as an empty object.
func open(t camelv1.Traits, name string) *object {
	o := &object{trait: name}
	raw := t[name].Raw
	if len(bytes.TrimSpace(raw)) == 0 || isNull(raw) {
		return o
	}
	if err := json.Unmarshal(raw, &o.keys); err != nil || o.keys == nil {
		o.errs = append(o.errs, fmt.Errorf("trait %s: must be an object, got %s", name, show(raw)))
	}
	return o
}

// disabled tells whether the trait says enabled: false.
func (o *object) disabled() bool {
	enabled := o.boolean("enabled")
	return enabled != nil && !*enabled
}

// value returns the raw value of key, or false when it is absent or null.
func (o *object) value(key string) (json.RawMessage, bool) {
	raw, ok := o.keys[key]
	if !ok || isNull(raw) {
		return nil, false
	}
	return raw, true
}

// fail records that key holds raw where expected was wanted.
func (o *object) fail(key, expected string, raw json.RawMessage) {
	o.errs = append(o.errs, fmt.Errorf("trait %s.%s: %s, got %s", o.trait, key, expected, show(raw)))
}

// str reads a string.
func (o *object) str(key string) string {
	raw, ok := o.value(key)
	if !ok {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		o.fail(key, "must be a string", raw)
	}
	return s
}

// boolean reads a boolean.
func (o *object) boolean(key string) *bool {
	raw, ok := o.value(key)
	if !ok {
		return nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		o.fail(key, "must be true or false", raw)
		return nil
	}
	return &b
}

// integer reads an integer in [lo, hi]; it returns nil when the key is unset or invalid.
func (o *object) integer(key string, lo, hi int64) *int64 {
	raw, ok := o.value(key)
	if !ok {
		return nil
	}
	n, ok := parseInt(raw)
	if !ok || n < lo || n > hi {
		o.fail(key, fmt.Sprintf("must be an integer between %d and %d", lo, hi), raw)
		return nil
	}
	return &n
}

// port reads a port number; 0 means unset.
func (o *object) port(key string) int32 {
	if n := o.integer(key, 1, 65535); n != nil {
		return int32(*n)
	}
	return 0
}

// oneOf reads a string that must be one of allowed.
func (o *object) oneOf(key string, allowed ...string) string {
	raw, _ := o.value(key)
	s := o.str(key)
	if s != "" && !slices.Contains(allowed, s) {
		o.fail(key, "must be one of "+strings.Join(allowed, ", "), raw)
		return ""
	}
	return s
}

// strs reads a list of strings.
func (o *object) strs(key string) []string {
	raw, ok := o.value(key)
	if !ok {
		return nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		o.fail(key, "must be a list of strings", raw)
		return nil
	}
	return list
}

// stringMap reads an object of strings.
func (o *object) stringMap(key string) map[string]string {
	raw, ok := o.value(key)
	if !ok {
		return nil
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		o.fail(key, "must be an object of strings", raw)
		return nil
	}
	return m
}

// quantity reads a resource quantity written as a string ("500m", "1Gi").
func (o *object) quantity(key string) *resource.Quantity {
	raw, _ := o.value(key)
	s := o.str(key)
	if s == "" {
		return nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		o.fail(key, `must be a quantity such as "500m" or "1Gi"`, raw)
		return nil
	}
	return &q
}

// intOrPercent reads a non-negative integer or a percent string ("25%").
func (o *object) intOrPercent(key string) *intstr.IntOrString {
	raw, ok := o.value(key)
	if !ok {
		return nil
	}
	const expected = `must be a non-negative integer or a percentage such as "25%"`
	if n, isInt := parseInt(raw); isInt {
		if n < 0 || n > math.MaxInt32 {
			o.fail(key, expected, raw)
			return nil
		}
		v := intstr.FromInt32(int32(n))
		return &v
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || len(validation.IsValidPercent(s)) > 0 {
		o.fail(key, expected, raw)
		return nil
	}
	v := intstr.FromString(s)
	return &v
}

// parseInt reads a JSON number that is an integer.
func parseInt(raw json.RawMessage) (int64, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return 0, false
	}
	num, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	n, err := num.Int64()
	return n, err == nil
}

func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// show prints a JSON value for an error message, compacted and shortened.
func show(raw json.RawMessage) string {
	var buf bytes.Buffer
	s := string(raw)
	if json.Compact(&buf, raw) == nil {
		s = buf.String()
	}
	const limit = 60
	if len(s) > limit {
		s = s[:limit] + "..."
	}
	return s
}
