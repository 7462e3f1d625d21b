// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package kamelet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// Property types a Kamelet definition may declare (JSON schema types).
const (
	TypeString  = "string"
	TypeInteger = "integer"
	TypeNumber  = "number"
	TypeBoolean = "boolean"
	TypeObject  = "object"
	TypeArray   = "array"
	// TypeBinary is a string of binary content, as the Kamelet catalog's keys and templates are.
	TypeBinary = "binary"
	// TypeLong is an integer, as the Kamelet catalog writes some.
	TypeLong = "long"
)

// Types are the property types a definition may declare.
var Types = []string{TypeString, TypeInteger, TypeNumber, TypeBoolean, TypeObject, TypeArray, TypeBinary, TypeLong}

// baseType is the JSON schema type a value of typ is checked as.
func baseType(typ string) string {
	switch typ {
	case TypeBinary:
		return TypeString
	case TypeLong:
		return TypeInteger
	}
	return typ
}

// IDProperty is the endpoint property that names a Kamelet's route instance (Camel K's
// rule): a Kamelet cannot define a property with this name.
const IDProperty = "id"

// PropertySpec is one property of a Kamelet's definition.
type PropertySpec struct {
	// Name of the property.
	Name string
	// Type is the JSON schema type (see Types); "" when the definition sets none.
	Type string `json:"type"`
	// Title is a short human name.
	Title string `json:"title"`
	// Description says what the property does.
	Description string `json:"description"`
	// Format is the JSON schema format, such as "password".
	Format string `json:"format"`
	// Default is the default value as written in the definition, or nil.
	Default json.RawMessage `json:"default"`
	// Example is an example value as written, or nil.
	Example json.RawMessage `json:"example"`
	// Enum lists the allowed values as written, if the definition restricts them.
	Enum []json.RawMessage `json:"enum"`
	// XDescriptors are the Camel K UI descriptors, such as urn:camel:group:credentials.
	XDescriptors []string `json:"x-descriptors"`
}

// HasDefault tells whether the definition sets a (non-null) default.
func (p PropertySpec) HasDefault() bool { return len(p.Default) > 0 && !isNull(p.Default) }

// DefaultValue is the default as the runtime reads it (a string, a number's digits, true or
// false, compact JSON), or "" when there is none. It suits KameletStatus.Properties.
func (p PropertySpec) DefaultValue() string {
	if !p.HasDefault() {
		return ""
	}
	s, _ := rawString("", p.Default)
	return s
}

// definition is the part of spec.definition Caravan reads.
type definition struct {
	Title       string                     `json:"title"`
	Description string                     `json:"description"`
	Required    []string                   `json:"required"`
	Properties  map[string]json.RawMessage `json:"properties"`
}

// Properties reads spec.definition: the properties by name and the required names, in the
// order written. A Kamelet without a definition has no properties. A definition that is
// not a JSON schema object, or a property that is not an object, is an error.
func Properties(k *camelv1.Kamelet) (map[string]PropertySpec, []string, error) {
	if k == nil || k.Spec.Definition == nil || len(k.Spec.Definition.Raw) == 0 || isNull(k.Spec.Definition.Raw) {
		return map[string]PropertySpec{}, nil, nil
	}
	var def definition
	if err := json.Unmarshal(k.Spec.Definition.Raw, &def); err != nil {
		return nil, nil, fmt.Errorf("spec.definition: must be a JSON schema object with properties and required: %w", err)
	}
	props := make(map[string]PropertySpec, len(def.Properties))
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(def.Properties)) {
		var p PropertySpec
		raw := def.Properties[name]
		if err := json.Unmarshal(raw, &p); err != nil || isNull(raw) || raw[0] != '{' {
			errs = append(errs, fmt.Errorf("spec.definition.properties.%s: must be an object with type, title, description and default", name))
			continue
		}
		p.Name = name
		props[name] = p
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	return props, def.Required, nil
}

// ResolveProperties checks the properties given to a Kamelet against its definition and
// returns each given value as a string, and the required properties given lacks (null counts
// as absent) that have no default, in the definition's order. Defaults are checked but not
// returned: the runtime reads them from the Kamelet, after its default and named
// configurations, as on Camel K. A value that does not match the property's type is an error
// naming the Kamelet and the property. Properties the definition does not declare are passed
// through (the template may read them). A string holding a property placeholder ("{{...}}")
// is accepted for any scalar type, since the runtime resolves it.
func ResolveProperties(k *camelv1.Kamelet, given map[string]any) (values map[string]string, missing []string, err error) {
	props, required, err := Properties(k)
	if err != nil {
		return nil, nil, fmt.Errorf("kamelet %s: %w", k.Name, err)
	}
	values = make(map[string]string, len(given))
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(given)) {
		v := given[name]
		if v == nil {
			continue
		}
		s, err := valueString(props[name].Type, v)
		if err != nil {
			errs = append(errs, fmt.Errorf("kamelet %s: property %q: %w", k.Name, name, err))
			continue
		}
		values[name] = s
	}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if !props[name].HasDefault() {
			continue
		}
		if _, err := rawString(props[name].Type, props[name].Default); err != nil {
			errs = append(errs, fmt.Errorf("kamelet %s: default of property %q: %w", k.Name, name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	for _, name := range required {
		if given[name] == nil && !props[name].HasDefault() {
			missing = append(missing, name)
		}
	}
	return values, missing, nil
}

// valueString converts a decoded JSON value (string, bool, float64, json.Number, map,
// slice) to the string the runtime reads, checking it against typ ("" accepts anything).
func valueString(typ string, v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("cannot encode the value: %w", err)
	}
	if n, ok := v.(float64); ok {
		// Keep integers written as JSON numbers free of exponents and fractions.
		raw = []byte(strconv.FormatFloat(n, 'f', -1, 64))
	}
	return rawString(typ, raw)
}

// rawString converts one JSON value to the string the runtime reads, checking it against
// typ ("" accepts anything).
func rawString(typ string, raw json.RawMessage) (string, error) {
	typ = baseType(typ)
	raw = bytes.TrimSpace(raw)
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, checkString(typ, s)
	}
	switch {
	case len(raw) == 0:
		return "", errors.New("the value is empty")
	case raw[0] == '{' || raw[0] == '[':
		want := map[byte]string{'{': TypeObject, '[': TypeArray}[raw[0]]
		if typ != "" && typ != want {
			return "", fmt.Errorf("must be %s, got %s %s", article(typ), article(want), raw)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, raw); err != nil {
			return "", fmt.Errorf("invalid JSON: %w", err)
		}
		return compact.String(), nil
	case string(raw) == "true" || string(raw) == "false":
		if typ != "" && typ != TypeBoolean && typ != TypeString {
			return "", fmt.Errorf("must be %s, got %s", article(typ), raw)
		}
		return string(raw), nil
	default: // a number
		return string(raw), checkNumber(typ, string(raw))
	}
}

// checkString checks a string value against typ.
func checkString(typ, s string) error {
	typ = baseType(typ)
	if isPlaceholder(s) {
		return nil
	}
	switch typ {
	case TypeInteger, TypeNumber:
		return checkNumber(typ, s)
	case TypeBoolean:
		if s != "true" && s != "false" {
			return fmt.Errorf("must be a boolean (true or false), got %q", s)
		}
	case TypeObject, TypeArray:
		if !json.Valid([]byte(s)) {
			return fmt.Errorf("must be %s, got %q", article(typ), s)
		}
	}
	return nil
}

// checkNumber checks that s is a number, and an integer for TypeInteger.
func checkNumber(typ, s string) error {
	switch typ {
	case TypeInteger:
		if _, ok := new(big.Int).SetString(s, 10); !ok {
			return fmt.Errorf("must be an integer, got %q", s)
		}
	case TypeNumber:
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			return fmt.Errorf("must be a number, got %q", s)
		}
	case TypeBoolean, TypeObject, TypeArray:
		return fmt.Errorf("must be %s, got %s", article(typ), s)
	}
	return nil
}

// isPlaceholder tells whether s holds a Camel property placeholder, resolved at run time.
func isPlaceholder(s string) bool {
	i := strings.Index(s, "{{")
	return i >= 0 && strings.Contains(s[i:], "}}")
}

func article(typ string) string {
	if strings.IndexByte("aeiou", typ[0]) >= 0 {
		return "an " + typ
	}
	return "a " + typ
}

func isNull(raw []byte) bool { return string(bytes.TrimSpace(raw)) == "null" }

// VersionProperty is the endpoint property that picks one of a Kamelet's versions, Camel K's.
const VersionProperty = "kameletVersion"

// WithVersion is k with the spec of its version named version (its main spec for ""), as Camel K
// clones a Kamelet for a binding that names a version. A version k does not have is an error that
// lists those it has.
func WithVersion(k *camelv1.Kamelet, version string) (*camelv1.Kamelet, error) {
	clone := k.DeepCopy()
	clone.Spec.Versions = nil
	if version == "" {
		return clone, nil
	}
	raw, ok := k.Spec.Versions[version]
	if !ok {
		have := slices.Sorted(maps.Keys(k.Spec.Versions))
		if len(have) == 0 {
			return nil, fmt.Errorf("kamelet %s has no version %q: it has no versions", k.Name, version)
		}
		return nil, fmt.Errorf("kamelet %s has no version %q: it has %s", k.Name, version, strings.Join(have, ", "))
	}
	var spec camelv1.KameletSpec
	if err := json.Unmarshal(raw.Raw, &spec); err != nil {
		return nil, fmt.Errorf("kamelet %s: version %q: %w", k.Name, version, err)
	}
	spec.Versions = nil
	clone.Spec = spec
	return clone, nil
}
