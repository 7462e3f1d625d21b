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
		crds = append(crds, d)
	}
	sort.Slice(crds, func(i, j int) bool { return crds[i].Name < crds[j].Name })
	return crds, nil
}
