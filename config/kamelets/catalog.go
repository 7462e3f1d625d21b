// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

// Package kamelets holds the four Kamelets Caravan's installer shipped before the operator installed
// Apache Camel's catalog: the catalog replaces them where an earlier install left them unchanged,
// and tests bind them where the catalog is off.
package kamelets

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

//go:embed *.kamelet.yaml
var files embed.FS

// Catalog decodes the embedded Kamelets, sorted by name. Each call returns new objects.
func Catalog() ([]*camelv1.Kamelet, error) {
	names, err := fs.Glob(files, "*.kamelet.yaml")
	if err != nil {
		return nil, err
	}
	out := make([]*camelv1.Kamelet, 0, len(names))
	for _, name := range names {
		data, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		k := &camelv1.Kamelet{}
		if err := yaml.UnmarshalStrict(data, k); err != nil {
			return nil, fmt.Errorf("kamelet catalog %s: %w", name, err)
		}
		if want := strings.TrimSuffix(name, ".kamelet.yaml"); k.Name != want {
			return nil, fmt.Errorf("kamelet catalog %s: the Kamelet is named %q, want %q", name, k.Name, want)
		}
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b *camelv1.Kamelet) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
