// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package crd

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/caravan-dev/caravan/internal/localcluster"
)

// stricterThanCamelK lists the constraints Caravan's schemas add to a field of Camel K's, each
// kept on purpose: Camel K's operator always writes the field.
var stricterThanCamelK = map[string]string{
	"Integration/v1.status.integrationKit: requires name": "Camel K's operator sets the kit's name with its reference",
}

// TestEverySchemaAcceptsWhatCamelKsOperatorWrites compares Caravan's CRDs with the CRDs of the
// Camel K release the end-to-end tests run beside Caravan: every field of Camel K's schemas has
// a place in Caravan's (typed, or kept as written), and Caravan's schema is no stricter on it.
// Camel K's operator, sharing the CRDs with Caravan's, then loses nothing it writes.
func TestEverySchemaAcceptsWhatCamelKsOperatorWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Camel K's release into the cache; skipped with -short")
	}
	release, err := localcluster.EnsureCamelK(context.Background(), os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(release.CRDs, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs of Camel K %s in %s", localcluster.CamelKVersion, release.CRDs)
	}
	ours, err := CustomResourceDefinitions()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		theirs := readCRD(t, f)
		t.Run(theirs.Spec.Names.Kind, func(t *testing.T) {
			i := slices.IndexFunc(ours, func(d *apiextensionsv1.CustomResourceDefinition) bool { return d.Name == theirs.Name })
			if i < 0 {
				t.Fatalf("Caravan has no CRD %s", theirs.Name)
			}
			var found []string
			for _, v := range theirs.Spec.Versions {
				w := slices.IndexFunc(ours[i].Spec.Versions, func(o apiextensionsv1.CustomResourceDefinitionVersion) bool { return o.Name == v.Name })
				if w < 0 {
					found = append(found, theirs.Name+": no version "+v.Name)
					continue
				}
				compareSchemas(theirs.Spec.Names.Kind+"/"+v.Name, v.Schema.OpenAPIV3Schema, ours[i].Spec.Versions[w].Schema.OpenAPIV3Schema, &found)
			}
			for _, f := range found {
				if _, ok := stricterThanCamelK[f]; !ok {
					t.Error(f)
				}
			}
		})
	}
}

func readCRD(t *testing.T, path string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, d); err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	return d
}

// compareSchemas appends to found what ours lacks or refuses of theirs at path.
func compareSchemas(path string, theirs, ours *apiextensionsv1.JSONSchemaProps, found *[]string) {
	keeps := ours.XPreserveUnknownFields != nil && *ours.XPreserveUnknownFields
	compareConstraints(path, theirs, ours, found)
	names := make([]string, 0, len(theirs.Properties))
	for name := range theirs.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		want := theirs.Properties[name]
		switch got, ok := ours.Properties[name]; {
		case ok:
			compareSchemas(path+"."+name, &want, &got, found)
		case ours.AdditionalProperties != nil && ours.AdditionalProperties.Schema != nil:
			compareSchemas(path+"."+name, &want, ours.AdditionalProperties.Schema, found)
		case !keeps:
			*found = append(*found, path+"."+name+": missing")
		}
	}
	if theirs.Items != nil && theirs.Items.Schema != nil {
		switch {
		case ours.Items != nil && ours.Items.Schema != nil:
			compareSchemas(path+"[]", theirs.Items.Schema, ours.Items.Schema, found)
		case !keeps:
			*found = append(*found, path+"[]: no item schema")
		}
	}
	if theirs.AdditionalProperties != nil && theirs.AdditionalProperties.Schema != nil {
		switch {
		case ours.AdditionalProperties != nil && ours.AdditionalProperties.Schema != nil:
			compareSchemas(path+"{}", theirs.AdditionalProperties.Schema, ours.AdditionalProperties.Schema, found)
		case !keeps:
			*found = append(*found, path+"{}: no schema for any key")
		}
	}
}

// compareConstraints appends to found the constraints ours puts on a value that theirs does not.
func compareConstraints(path string, theirs, ours *apiextensionsv1.JSONSchemaProps, found *[]string) {
	add := func(what string) { *found = append(*found, path+": "+what) }
	for _, r := range ours.Required {
		if !slices.Contains(theirs.Required, r) {
			add("requires " + r)
		}
	}
	if ours.Type != "" && theirs.Type != "" && ours.Type != theirs.Type && !(ours.Type == "object" && ours.XPreserveUnknownFields != nil) {
		add("is a " + ours.Type + ", Camel K's a " + theirs.Type)
	}
	if ours.Pattern != "" && ours.Pattern != theirs.Pattern {
		add("has the pattern " + ours.Pattern)
	}
	if len(ours.Enum) > 0 && len(theirs.Enum) == 0 {
		add("is an enumeration")
	}
	if ours.MaxLength != nil && (theirs.MaxLength == nil || *theirs.MaxLength > *ours.MaxLength) {
		add("has a maximum length")
	}
	if ours.Format != "" && ours.Format != theirs.Format {
		add("has the format " + ours.Format)
	}
}
