// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package pipe

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// DataTypeKamelet is the action Kamelet that converts a message to a data type, as Camel K calls it.
const DataTypeKamelet = "data-type-action"

// Data type slots, as Camel K names them.
const (
	slotIn  = "in"
	slotOut = "out"
)

// dataTypeSteps are the data-type-action steps of an endpoint's dataTypes, as Camel K writes them:
// the in slot before the endpoint (a sink, an action), the out slot after it (a source, an
// action). Each step is the instance <endpoint's id>-<slot> of the Kamelet, with the properties
// scheme (camel unless the format or scheme names another) and format. A slot the endpoint's
// role does not have, and dataTypes on an endpoint that is not a Kamelet, are refused.
func (c *compiler) dataTypeSteps(ro role, where string, e camelv1.Endpoint, uri string, pos int) (before, after []any, err error) {
	if len(e.DataTypes) == 0 {
		return nil, nil, nil
	}
	if e.Ref == nil || e.Ref.Kind != kindKamelet {
		return nil, nil, fmt.Errorf("%s: dataTypes apply to a Kamelet endpoint only: convert the data with a step of the %s Kamelet", where, DataTypeKamelet)
	}
	slots := map[role][]string{roleSource: {slotOut}, roleSink: {slotIn}, roleAction: {slotIn, slotOut}}[ro]
	for _, slot := range slices.Sorted(maps.Keys(e.DataTypes)) {
		if !slices.Contains(slots, slot) {
			return nil, nil, fmt.Errorf("%s: dataTypes.%s: a %s takes the data type slots %s", where, slot, ro, strings.Join(slots, " and "))
		}
	}
	_, instance, _ := strings.Cut(strings.TrimPrefix(uri, "kamelet:"), "/")
	step := func(slot string) (any, error) {
		ref, ok := e.DataTypes[slot]
		if !ok {
			return nil, nil
		}
		scheme, format := ref.Scheme, ref.Format
		if s, f, found := strings.Cut(format, ":"); scheme == "" && found {
			scheme, format = s, f
		}
		if scheme == "" {
			scheme = "camel"
		}
		if format == "" {
			return nil, fmt.Errorf("%s: dataTypes.%s has no format", where, slot)
		}
		props := map[string]any{"id": instance + "-" + slot, "scheme": scheme, "format": format}
		u, err := c.kameletEndpoint(roleAction, fmt.Sprintf("%s: dataTypes.%s", where, slot), DataTypeKamelet, "", props, pos)
		if err != nil {
			return nil, err
		}
		return map[string]any{"kamelet": map[string]any{"name": strings.TrimPrefix(u, "kamelet:")}}, nil
	}
	in, err := step(slotIn)
	if err != nil {
		return nil, nil, err
	}
	out, err := step(slotOut)
	if err != nil {
		return nil, nil, err
	}
	if in != nil {
		before = []any{in}
	}
	if out != nil {
		after = []any{out}
	}
	return before, after, nil
}
