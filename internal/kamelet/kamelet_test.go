// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package kamelet_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/kamelet"
)

const timerSource = `
apiVersion: camel.apache.org/v1
kind: Kamelet
metadata:
  name: timer-source
  labels: {camel.apache.org/kamelet.type: source}
spec:
  definition:
    title: Timer Source
    required: [message]
    properties:
      message: {title: Message, description: The body., type: string}
      period: {title: Period, type: integer, default: 1000, x-descriptors: ["urn:camel:group:advanced"]}
      ratio: {type: number, default: "0.5"}
      verbose: {type: boolean, default: false}
      headers: {type: object}
      key: {type: binary}
      replay: {type: long, default: -1}
  template:
    from:
      uri: timer:tick
      parameters: {period: "{{period}}"}
      steps:
      - setBody: {constant: "{{message}}"}
      - to: {uri: kamelet:sink}
`

// parse decodes the test Kamelet, then applies edit to its YAML tree first when given.
func parse(t *testing.T, edit func(m map[string]any)) *camelv1.Kamelet {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(timerSource), &m); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(m)
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	k := &camelv1.Kamelet{}
	if err := json.Unmarshal(data, k); err != nil {
		t.Fatal(err)
	}
	return k
}

func at(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		m = m[p].(map[string]any)
	}
	return m
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(m map[string]any)
		reason string
		says   string
	}{
		{"a well-formed source Kamelet has no problems", nil, "", ""},
		{"a name with a dot is refused because it is part of property keys",
			func(m map[string]any) { at(m, "metadata")["name"] = "timer.source" },
			kamelet.ReasonInvalidName, `name "timer.source": use lowercase letters`},
		{"the name sink is reserved by kamelet:sink",
			func(m map[string]any) { at(m, "metadata")["name"] = "sink" },
			kamelet.ReasonInvalidName, `name "sink" is reserved by kamelet:sink`},
		{"a type label other than source, sink or action is refused",
			func(m map[string]any) { at(m, "metadata", "labels")[camelv1.KameletTypeLabel] = "step" },
			kamelet.ReasonInvalidName, `label camel.apache.org/kamelet.type is "step": set it to source, sink or action`},
		{"a property without a type is named",
			func(m map[string]any) { delete(at(m, "spec", "definition", "properties", "message"), "type") },
			kamelet.ReasonInvalidProperty, `property "message": set type to one of string, integer`},
		{"an unknown property type is named",
			func(m map[string]any) { at(m, "spec", "definition", "properties", "message")["type"] = "text" },
			kamelet.ReasonInvalidProperty, `property "message": type "text" is unknown`},
		{"a default that does not match the type is named",
			func(m map[string]any) { at(m, "spec", "definition", "properties", "period")["default"] = "soon" },
			kamelet.ReasonInvalidProperty, `property "period": the default "soon" does not match type integer`},
		{"a required property that is not defined is named",
			func(m map[string]any) { at(m, "spec", "definition")["required"] = []any{"message", "topic"} },
			kamelet.ReasonInvalidProperty, `required property "topic" is not defined`},
		{"a property named id is refused because bindings use it to name instances",
			func(m map[string]any) {
				at(m, "spec", "definition", "properties")["id"] = map[string]any{"type": "string"}
			},
			kamelet.ReasonInvalidProperty, `property "id": the name is reserved`},
		{"a Kamelet without template is refused",
			func(m map[string]any) { delete(at(m, "spec"), "template") },
			kamelet.ReasonInvalidTemplate, "spec.template is missing"},
		{"a template without from.uri is refused",
			func(m map[string]any) { delete(at(m, "spec", "template", "from"), "uri") },
			kamelet.ReasonInvalidTemplate, "spec.template.from.uri must be set"},
		{"a source that never sends to kamelet:sink is refused",
			func(m map[string]any) {
				at(m, "spec", "template", "from")["steps"] = []any{map[string]any{"to": "log:info"}}
			},
			kamelet.ReasonInvalidTemplate, "must send to kamelet:sink"},
		{"a sink must read from kamelet:source",
			func(m map[string]any) { at(m, "metadata", "labels")[camelv1.KameletTypeLabel] = "sink" },
			kamelet.ReasonInvalidTemplate, `from.uri must be kamelet:source for a sink Kamelet, got "timer:tick"`},
		{"an action that reads from kamelet:source needs no kamelet:sink",
			func(m map[string]any) {
				at(m, "metadata", "labels")[camelv1.KameletTypeLabel] = "action"
				at(m, "spec", "template")["from"] = map[string]any{"uri": "kamelet:source", "steps": []any{map[string]any{"setBody": map[string]any{"constant": "x"}}}}
			}, "", ""},
		{"an untyped Kamelet must be connected to kamelet:source or kamelet:sink",
			func(m map[string]any) {
				delete(at(m, "metadata"), "labels")
				at(m, "spec", "template", "from")["steps"] = []any{}
			}, kamelet.ReasonInvalidTemplate, "must read from kamelet:source or send to kamelet:sink"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			problems := kamelet.Validate(parse(t, tt.edit))
			if tt.reason == "" {
				if len(problems) > 0 {
					t.Fatalf("Validate = %v, want no problems", problems)
				}
				return
			}
			if len(problems) != 1 || problems[0].Reason != tt.reason || !strings.Contains(problems[0].Message, tt.says) {
				t.Fatalf("Validate = %v, want one %s saying %q", problems, tt.reason, tt.says)
			}
		})
	}
}

func TestProperties(t *testing.T) {
	props, required, err := kamelet.Properties(parse(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	p := props["period"]
	if p.Name != "period" || p.Type != "integer" || p.Title != "Period" || string(p.Default) != "1000" || p.DefaultValue() != "1000" || props["ratio"].DefaultValue() != "0.5" ||
		len(p.XDescriptors) != 1 || !p.HasDefault() || props["message"].HasDefault() {
		t.Errorf("period = %+v, want the definition as written", p)
	}
	if len(props) != 7 || len(required) != 1 || required[0] != "message" {
		t.Errorf("Properties = %d properties, required %v; want 7 and [message]", len(props), required)
	}
	broken := parse(t, func(m map[string]any) { at(m, "spec")["definition"] = map[string]any{"properties": []any{"a"}} })
	if _, _, err := kamelet.Properties(broken); err == nil {
		t.Error("Properties accepted a definition whose properties are a list")
	}
}

func TestResolvePropertiesNamesTheMissingRequiredOnes(t *testing.T) {
	for _, tt := range []struct {
		name  string
		given map[string]any
		want  []string
	}{
		{"a required property not given is missing", map[string]any{"period": 5}, []string{"message"}},
		{"a null value counts as missing", map[string]any{"message": nil}, []string{"message"}},
		{"a given one is not", map[string]any{"message": "hi"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, got, err := kamelet.ResolveProperties(parse(t, nil), tt.given)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ResolveProperties's missing = %v, want %v", got, tt.want)
			}
		})
	}
	withDefault := parse(t, func(m map[string]any) {
		at(m, "spec", "definition", "properties", "message")["default"] = "hello"
	})
	if _, got, err := kamelet.ResolveProperties(withDefault, nil); err != nil || got != nil {
		t.Errorf("a required property with a default: ResolveProperties's missing = %v, %v, want none", got, err)
	}
}

func TestResolveProperties(t *testing.T) {
	tests := []struct {
		name  string
		given map[string]any
		want  map[string]string
		err   string
	}{
		{"defaults are left to the runtime, which reads them after the Kamelet's configurations",
			map[string]any{"message": "hi"},
			map[string]string{"message": "hi"}, ""},
		{"numbers keep their digits",
			map[string]any{"message": 42, "period": json.Number("20000000000000000001"), "ratio": 2.5, "verbose": "true"},
			map[string]string{"message": "42", "period": "20000000000000000001", "ratio": "2.5", "verbose": "true"}, ""},
		{"objects are passed as compact JSON and unknown properties pass through",
			map[string]any{"message": "hi", "headers": map[string]any{"a": "b"}, "extra": "x"},
			map[string]string{"message": "hi", "headers": `{"a":"b"}`, "extra": "x"}, ""},
		{"a placeholder is accepted for an integer since the runtime resolves it",
			map[string]any{"message": "hi", "period": "{{env:PERIOD}}"},
			map[string]string{"message": "hi", "period": "{{env:PERIOD}}"}, ""},
		{"the catalog's binary is a string and its long an integer",
			map[string]any{"message": "hi", "key": "base64:AAEC", "replay": 42},
			map[string]string{"message": "hi", "key": "base64:AAEC", "replay": "42"}, ""},
		{"a long is an integer",
			map[string]any{"message": "hi", "replay": "soon"}, nil, `property "replay": must be an integer, got "soon"`},
		{"a null value is absent",
			map[string]any{"message": nil, "period": 5}, map[string]string{"period": "5"}, ""},
		{"an integer given as text that is not a number is refused",
			map[string]any{"message": "hi", "period": "abc"}, nil, `kamelet timer-source: property "period": must be an integer, got "abc"`},
		{"a fraction is not an integer",
			map[string]any{"message": "hi", "period": 1.5}, nil, `property "period": must be an integer, got "1.5"`},
		{"a boolean must be true or false",
			map[string]any{"message": "hi", "verbose": "yes"}, nil, `property "verbose": must be a boolean (true or false), got "yes"`},
		{"a string property does not take an object",
			map[string]any{"message": map[string]any{"a": 1}}, nil, `property "message": must be a string, got an object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := kamelet.ResolveProperties(parse(t, nil), tt.given)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ResolveProperties error = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("ResolveProperties = %v, want %v", got, tt.want)
			}
		})
	}
}
