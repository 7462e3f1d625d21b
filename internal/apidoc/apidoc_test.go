// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package apidoc

import (
	"flag"
	"os"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/caravan-dev/caravan/config/crd"
)

// apiDoc is the API reference, seen from this package's directory.
const apiDoc = "../../docs/api.md"

var update = flag.Bool("update", false, "rewrite docs/api.md from the CRDs")

// TestTheAPIReferenceIsCurrent fails when docs/api.md differs from the reference of the
// embedded CRDs; -update rewrites it.
func TestTheAPIReferenceIsCurrent(t *testing.T) {
	crds, err := crd.CustomResourceDefinitions()
	if err != nil {
		t.Fatal(err)
	}
	want, err := Markdown(crds)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(apiDoc, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(apiDoc)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s is stale: run go test ./internal/apidoc -run TestTheAPIReferenceIsCurrent -update", apiDoc)
	}
}

// widgetCRD is a small CRD with a nested, an array, a required and a free-form field.
const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names:
    kind: Widget
    plural: widgets
    shortNames: [wd]
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    additionalPrinterColumns:
    - name: Phase
      jsonPath: .status.phase
      type: string
      description: The widget phase
    - name: Image
      jsonPath: .status.image
      type: string
      priority: 1
    schema:
      openAPIV3Schema:
        description: Widget turns a few fields into a test.
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            required: [traits]
            properties:
              traits:
                description: Traits configure the widget.
                type: object
                properties:
                  container:
                    type: object
                    properties:
                      image:
                        description: |-
                          Image is the container image,
                          written as a reference.

                          This paragraph is left out.
                        type: string
              ports:
                description: Ports are the ports to open.
                type: array
                items:
                  type: integer
                  format: int32
              sources:
                type: array
                items:
                  type: object
                  required: [name]
                  properties:
                    name:
                      description: Name | the file name.
                      type: string
              labels:
                type: object
                additionalProperties: {type: string}
              volumes:
                description: Volumes are mounted <by name>.
                type: object
                additionalProperties:
                  type: object
                  properties:
                    path: {type: string}
                x-kubernetes-validations:
                - message: at most 3 volumes
                  rule: size(self) <= 3
              flows:
                description: Flows are routes, kept as written.
                type: array
                items:
                  type: object
                  x-kubernetes-preserve-unknown-fields: true
              git:
                type: object
                x-kubernetes-preserve-unknown-fields: true
          status:
            type: object
            properties:
              phase:
                type: string
                enum: [Ready, Error]
`

func TestMarkdownRendersAKindsFieldsAndColumns(t *testing.T) {
	d := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict([]byte(widgetCRD), d); err != nil {
		t.Fatal(err)
	}
	out, err := Markdown([]*apiextensionsv1.CustomResourceDefinition{d})
	if err != nil {
		t.Fatal(err)
	}
	md := string(out)
	for _, tc := range []struct {
		name string
		line string
	}{
		{"the contents link to the kind", "- [Widget](#widget): `example.com/v1`"},
		{"the kind says its scope", "- Resource: `widgets.example.com`, namespaced"},
		{"the kind lists its short names", "- Short names: `wd`"},
		{"the kind opens with its description", "## Widget\n\nWidget turns a few fields into a test.\n"},
		{"a printer column shows its path and priority", "| Image | `.status.image` | 1 |  |"},
		{"a nested field shows its full path and first paragraph",
			"| `spec.traits.container.image` | string |  | Image is the container image, written as a reference. |"},
		{"a required field is marked", "| `spec.traits` | object | yes | Traits configure the widget. |"},
		{"an array field names its element type", "| `spec.ports` | []integer (int32) |  | Ports are the ports to open. |"},
		{"an array item's fields hang from the array's path", "| `spec.sources[].name` | string | yes | Name \\| the file name. |"},
		{"a map field names its value type", "| `spec.labels` | map[string]string |  |  |"},
		{"a map of objects names its value type and escapes HTML in its description",
			"| `spec.volumes` | map[string]object |  | Volumes are mounted &lt;by name&gt;. Rule: at most 3 volumes. |"},
		{"a map value's fields hang from the map's path", "| `spec.volumes.<key>.path` | string |  |  |"},
		{"a preserve-unknown-fields object is free-form", "| `spec.git` | free-form object |  |  |"},
		{"an array of preserve-unknown-fields objects is free-form", "| `spec.flows` | []free-form object |  | Flows are routes, kept as written. |"},
		{"an enum lists its values", "| `status.phase` | string |  | One of `Ready`, `Error`. |"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(md, tc.line) {
				t.Errorf("the reference lacks\n%s\nin\n%s", tc.line, md)
			}
		})
	}
	for _, left := range []string{"This paragraph is left out", "`metadata`", "`spec.traits.container.image.`"} {
		if strings.Contains(md, left) {
			t.Errorf("the reference holds %q, which it should leave out", left)
		}
	}
}

func TestMarkdownStopsAtMaxDepth(t *testing.T) {
	leaf := apiextensionsv1.JSONSchemaProps{Type: "string"}
	for range MaxDepth + 2 {
		leaf = apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"a": leaf}}
	}
	d := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "example.com",
		Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Deep"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
			Name: "v1", Served: true, Storage: true,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": leaf},
			}},
		}},
	}}
	out, err := Markdown([]*apiextensionsv1.CustomResourceDefinition{d})
	if err != nil {
		t.Fatal(err)
	}
	deepest := "spec" + strings.Repeat(".a", MaxDepth-1)
	if !strings.Contains(string(out), "| `"+deepest+"` | object |  | Its fields are not listed here. |") {
		t.Errorf("the reference does not end at %s with a note:\n%s", deepest, out)
	}
	if strings.Contains(string(out), deepest+".a") {
		t.Errorf("the reference lists fields below %s:\n%s", deepest, out)
	}
}
