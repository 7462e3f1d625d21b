// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

// Package catalog maps what a Camel route names (a URI scheme, a data format, an
// expression language) to the Camel module that provides it. The table is generated
// from Camel's own catalog of one release by hack/catalog (make catalog) and embedded.
package catalog

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// File is the name of the generated table, beside this file.
const File = "catalog.json"

//go:embed catalog.json
var data []byte

// Catalog is the table of one Camel release. Every module it names is the artifact id
// of one of Camel's own modules (camel-kafka); Dependency writes it as a kit dependency.
type Catalog struct {
	// CamelVersion is the release the table was generated from.
	CamelVersion string `json:"camelVersion"`
	// Runtime is what every kit already holds.
	Runtime Runtime `json:"runtime"`
	// Components maps each URI scheme, alternative schemes included, to its module.
	Components map[string]string `json:"components"`
	// DataFormats maps each data format name (jackson, csv, ...) to its module.
	DataFormats map[string]string `json:"dataFormats"`
	// DataFormatModels maps the name a route writes a data format under (json, csv,
	// ...) to the module of its default implementation.
	DataFormatModels map[string]string `json:"dataFormatModels"`
	// Languages maps each language name and the name routes write its expressions
	// under (jsonpath, groovy, method, ...) to its module.
	Languages map[string]string `json:"languages"`
}

// Runtime is the part of the runtime's dependency set that is Camel's own modules.
type Runtime struct {
	// Roots are the runtime's declared dependencies (group:artifact) the table was
	// generated for.
	Roots []string `json:"roots"`
	// Modules are the Camel modules the roots bring, transitively, roots included,
	// sorted.
	Modules []string `json:"modules"`
}

// load parses the embedded table once.
var load = sync.OnceValues(func() (*Catalog, error) {
	c := &Catalog{}
	if err := json.Unmarshal(data, c); err != nil {
		return nil, fmt.Errorf("catalog: reading the embedded %s: %w", File, err)
	}
	return c, nil
})

// Camel returns the embedded table. It panics if the table does not parse, which a
// unit test rules out.
func Camel() *Catalog {
	c, err := load()
	if err != nil {
		panic(err)
	}
	return c
}

// Component returns the module of a URI scheme, and whether the catalog knows it.
func (c *Catalog) Component(scheme string) (string, bool) {
	m, ok := c.Components[scheme]
	return m, ok
}

// DataFormat returns the module of a data format named by its name (jackson) or by
// the name routes write it under (json), and whether the catalog knows it.
func (c *Catalog) DataFormat(name string) (string, bool) {
	if m, ok := c.DataFormats[name]; ok {
		return m, true
	}
	m, ok := c.DataFormatModels[name]
	return m, ok
}

// Language returns the module of an expression language, and whether the catalog
// knows it.
func (c *Catalog) Language(name string) (string, bool) {
	m, ok := c.Languages[name]
	return m, ok
}

// InRuntime tells whether every kit already holds module.
func (c *Catalog) InRuntime(module string) bool {
	_, found := slices.BinarySearch(c.Runtime.Modules, module)
	return found
}

// Dependency writes module as a kit dependency, camel:NAME.
func Dependency(module string) string {
	return "camel:" + strings.TrimPrefix(module, "camel-")
}
