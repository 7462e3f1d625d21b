// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

// Package crd embeds Caravan's generated CustomResourceDefinitions.
//
// The CRDs in bases/ and the deepcopy code in api/ are generated; regenerate both from the
// repository root with:
//
//	go tool controller-gen object:headerFile=hack/boilerplate.go.txt paths=./api/...
//	go tool controller-gen crd paths=./api/... output:crd:artifacts:config=config/crd/bases
//
// TestGeneratedFilesAreUpToDate fails when the committed files differ from what these produce.
package crd

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

//go:embed bases/*.yaml
var bases embed.FS

// PartOfLabel marks a CRD as Caravan's, so that an install tells it from
// another installer's CRD of the same name (Camel K's).
const PartOfLabel = "app.kubernetes.io/part-of"

// PartOf is PartOfLabel's value on Caravan's CRDs.
const PartOf = "caravan"

// CustomResourceDefinitions returns the CRDs of all Caravan kinds, sorted
// by name, labelled as Caravan's (PartOfLabel).
func CustomResourceDefinitions() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(bases, "bases/*.yaml")
	if err != nil {
		return nil, err
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(files))
	for _, f := range files {
		data, err := bases.ReadFile(f)
		if err != nil {
			return nil, err
		}
		d := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, d); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", f, err)
		}
		if d.Labels == nil {
			d.Labels = map[string]string{}
		}
		d.Labels[PartOfLabel] = PartOf
		acceptCamelKConditions(d)
		crds = append(crds, d)
	}
	sort.Slice(crds, func(i, j int) bool { return crds[i].Name < crds[j].Name })
	return crds, nil
}

// acceptCamelKConditions widens the schema of status.conditions to what Camel K's operator writes
// too: only type and status are required, reason and message may be absent or free, and Camel K's
// lastUpdateTime, firstTruthyTime and pods are kept. Caravan's own conditions are
// metav1.Conditions, checked by the code that sets them; the generated schema of that Go type
// (controller-gen's, in bases/) would refuse a status Camel K's operator writes.
func acceptCamelKConditions(d *apiextensionsv1.CustomResourceDefinition) {
	for i := range d.Spec.Versions {
		v := &d.Spec.Versions[i]
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		status, ok := v.Schema.OpenAPIV3Schema.Properties["status"]
		if !ok {
			continue
		}
		conditions, ok := status.Properties["conditions"]
		if !ok || conditions.Items == nil || conditions.Items.Schema == nil {
			continue
		}
		item := conditions.Items.Schema
		item.Required = []string{"type", "status"}
		for name, p := range item.Properties {
			p.Pattern, p.MaxLength, p.MinLength, p.Enum = "", nil, nil, nil
			item.Properties[name] = p
		}
		timestamp := apiextensionsv1.JSONSchemaProps{Type: "string", Format: "date-time"}
		timestamp.Description = "Camel K's operator writes it; Caravan's does not."
		item.Properties["lastUpdateTime"] = timestamp
		item.Properties["firstTruthyTime"] = timestamp
		item.Properties["pods"] = apiextensionsv1.JSONSchemaProps{
			Type:        "array",
			Description: "The pods' conditions, as Camel K's operator writes them; Caravan's does not.",
			Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object", XPreserveUnknownFields: ptr.To(true)}},
		}
		status.Properties["conditions"] = conditions
		v.Schema.OpenAPIV3Schema.Properties["status"] = status
	}
}
