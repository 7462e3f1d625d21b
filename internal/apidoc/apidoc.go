// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

// Package apidoc renders a Markdown reference of CustomResourceDefinitions: kinds, columns and fields.
//
// docs/api.md is its output for Caravan's CRDs; TestTheAPIReferenceIsCurrent keeps it current.
package apidoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

// MaxDepth is how many field names deep the reference lists; deeper fields are left out.
const MaxDepth = 8

// Intro opens the reference, under its title.
const Intro = "This reference is generated from the CRDs in config/crd/bases, whose descriptions come from " +
	"the Go types in api/. Do not edit it; regenerate it with " +
	"`go test ./internal/apidoc -run TestTheAPIReferenceIsCurrent -update`.\n"

// standardFields are the top-level fields every kind has; the reference leaves them out.
var standardFields = []string{"apiVersion", "kind", "metadata"}

// Markdown renders the reference of crds: a table of contents, then each kind's facts,
// printer columns and fields, sorted by kind.
func Markdown(crds []*apiextensionsv1.CustomResourceDefinition) ([]byte, error) {
	sorted := slices.Clone(crds)
	slices.SortFunc(sorted, func(a, b *apiextensionsv1.CustomResourceDefinition) int {
		return strings.Compare(a.Spec.Names.Kind, b.Spec.Names.Kind)
	})
	var b bytes.Buffer
	b.WriteString("# API reference\n\n" + Intro + "\n")
	for _, crd := range sorted {
		fmt.Fprintf(&b, "- [%s](#%s): `%s`\n", crd.Spec.Names.Kind, anchor(crd.Spec.Names.Kind), strings.Join(apiVersions(crd), "`, `"))
	}
	for _, crd := range sorted {
		if err := writeKind(&b, crd); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// writeKind writes one CRD's section: its description and facts, then each version's
// columns and fields.
func writeKind(b *bytes.Buffer, crd *apiextensionsv1.CustomResourceDefinition) error {
	if len(crd.Spec.Versions) == 0 {
		return fmt.Errorf("%s has no versions", crd.Name)
	}
	for _, v := range crd.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return fmt.Errorf("%s version %s has no schema", crd.Name, v.Name)
		}
	}
	kind := crd.Spec.Names.Kind
	fmt.Fprintf(b, "\n## %s\n\n", kind)
	if desc := firstParagraph(storageVersion(crd).Schema.OpenAPIV3Schema.Description); desc != "" {
		b.WriteString(desc + "\n\n")
	}
	writeFacts(b, crd)
	for _, v := range crd.Spec.Versions {
		fmt.Fprintf(b, "\n### %s %s\n\n", kind, v.Name)
		if v.Deprecated {
			b.WriteString(strings.TrimSpace("Deprecated. "+firstParagraph(ptr.Deref(v.DeprecationWarning, ""))) + "\n\n")
		}
		if len(crd.Spec.Versions) > 1 {
			if desc := firstParagraph(v.Schema.OpenAPIV3Schema.Description); desc != "" {
				b.WriteString(desc + "\n\n")
			}
		}
		writeColumns(b, v.AdditionalPrinterColumns)
		writeFields(b, v.Schema.OpenAPIV3Schema)
	}
	return nil
}

// writeFacts writes a CRD's API versions, resource name, scope, short names, categories,
// subresources and object-level validation rules as a list.
func writeFacts(b *bytes.Buffer, crd *apiextensionsv1.CustomResourceDefinition) {
	fmt.Fprintf(b, "- API version: `%s`\n", strings.Join(apiVersions(crd), "`, `"))
	scope := "namespaced"
	if crd.Spec.Scope == apiextensionsv1.ClusterScoped {
		scope = "cluster-scoped"
	}
	fmt.Fprintf(b, "- Resource: `%s`, %s\n", crd.Name, scope)
	if names := crd.Spec.Names.ShortNames; len(names) > 0 {
		fmt.Fprintf(b, "- Short names: `%s`\n", strings.Join(names, "`, `"))
	}
	if cats := crd.Spec.Names.Categories; len(cats) > 0 {
		fmt.Fprintf(b, "- Categories: `%s`\n", strings.Join(cats, "`, `"))
	}
	if sub := storageVersion(crd).Subresources; sub != nil {
		var names []string
		if sub.Status != nil {
			names = append(names, "status")
		}
		if sub.Scale != nil {
			names = append(names, fmt.Sprintf("scale (replicas at `%s`)", sub.Scale.SpecReplicasPath))
		}
		if len(names) > 0 {
			fmt.Fprintf(b, "- Subresources: %s\n", strings.Join(names, ", "))
		}
	}
	for _, rule := range storageVersion(crd).Schema.OpenAPIV3Schema.XValidations {
		fmt.Fprintf(b, "- Rule: %s\n", cell(ruleText(rule)))
	}
}

// writeColumns writes the printer columns as a table; priority 1 columns show only with -o wide.
func writeColumns(b *bytes.Buffer, cols []apiextensionsv1.CustomResourceColumnDefinition) {
	if len(cols) == 0 {
		return
	}
	b.WriteString("Columns of `kubectl get` (priority 1 shows with `-o wide`):\n\n")
	b.WriteString("| Column | JSONPath | Priority | Description |\n|---|---|---|---|\n")
	for _, c := range cols {
		fmt.Fprintf(b, "| %s | %s | %d | %s |\n", cell(c.Name), cell("`"+c.JSONPath+"`"), c.Priority, cell(firstParagraph(c.Description)))
	}
	b.WriteString("\n")
}

// writeFields writes the fields under the top-level object as one table, spec first, then status.
func writeFields(b *bytes.Buffer, root *apiextensionsv1.JSONSchemaProps) {
	var names []string
	for name := range root.Properties {
		if !slices.Contains(standardFields, name) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return
	}
	slices.SortFunc(names, func(a, b string) int {
		return strings.Compare(topOrder(a), topOrder(b))
	})
	b.WriteString("Fields:\n\n| Field | Type | Required | Description |\n|---|---|---|---|\n")
	for _, name := range names {
		writeField(b, name, root.Properties[name], slices.Contains(root.Required, name), 1)
	}
}

// topOrder is the sort key of a top-level field: spec, then status, then the rest by name.
func topOrder(name string) string {
	switch name {
	case "spec":
		return "0"
	case "status":
		return "1"
	}
	return "2" + name
}

// writeField writes the row of the field at path, then the rows of the fields it holds,
// down to MaxDepth names deep.
func writeField(b *bytes.Buffer, path string, s apiextensionsv1.JSONSchemaProps, required bool, depth int) {
	req := ""
	if required {
		req = "yes"
	}
	children, childPath := fieldsOf(s, path)
	desc := description(s)
	if len(children.Properties) > 0 && depth >= MaxDepth {
		desc = strings.TrimSpace(desc + " Its fields are not listed here.")
	}
	fmt.Fprintf(b, "| %s | %s | %s | %s |\n", cell("`"+path+"`"), cell(typeOf(s)), req, cell(desc))
	if depth >= MaxDepth {
		return
	}
	for _, name := range sortedKeys(children.Properties) {
		writeField(b, childPath+"."+name, children.Properties[name], slices.Contains(children.Required, name), depth+1)
	}
}

// fieldsOf returns the object whose properties are the fields below s, looking through array
// items and map values, and the path those fields hang from: path[] for items, path.<key> for values.
func fieldsOf(s apiextensionsv1.JSONSchemaProps, path string) (apiextensionsv1.JSONSchemaProps, string) {
	for {
		switch {
		case s.Type == "array" && s.Items != nil && s.Items.Schema != nil:
			s, path = *s.Items.Schema, path+"[]"
		case len(s.Properties) == 0 && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
			s, path = *s.AdditionalProperties.Schema, path+".<key>"
		default:
			return s, path
		}
	}
}

// typeOf names a schema's type: []T for arrays, map[string]T for maps, with the format in
// parentheses, "free-form object" for objects that keep unknown fields.
func typeOf(s apiextensionsv1.JSONSchemaProps) string {
	switch {
	case s.XIntOrString:
		return "int or string"
	case s.Type == "array" && s.Items != nil && s.Items.Schema != nil:
		return "[]" + typeOf(*s.Items.Schema)
	case s.Type == "array":
		return "[]any"
	case len(s.Properties) == 0 && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
		return "map[string]" + typeOf(*s.AdditionalProperties.Schema)
	case ptr.Deref(s.XPreserveUnknownFields, false) && len(s.Properties) == 0:
		return "free-form object"
	case ptr.Deref(s.XPreserveUnknownFields, false):
		return "object, free-form"
	case s.Type == "":
		return "any"
	case s.Format != "":
		return s.Type + " (" + s.Format + ")"
	}
	return s.Type
}

// description is a field's first paragraph, followed by its allowed values, default and
// validation rules when it has them.
func description(s apiextensionsv1.JSONSchemaProps) string {
	parts := []string{firstParagraph(s.Description)}
	if len(s.Enum) > 0 {
		vals := make([]string, len(s.Enum))
		for i, v := range s.Enum {
			vals[i] = "`" + jsonValue(v) + "`"
		}
		parts = append(parts, "One of "+strings.Join(vals, ", ")+".")
	}
	if s.Default != nil {
		parts = append(parts, "Default `"+jsonValue(*s.Default)+"`.")
	}
	for _, rule := range s.XValidations {
		parts = append(parts, "Rule: "+ruleText(rule))
	}
	return strings.TrimSpace(strings.Join(parts, " "))
}

// ruleText is a validation rule's message as a sentence, or its CEL expression when it has none.
func ruleText(rule apiextensionsv1.ValidationRule) string {
	if msg := firstParagraph(rule.Message); msg != "" {
		if !strings.HasSuffix(msg, ".") {
			msg += "."
		}
		return msg
	}
	return "`" + rule.Rule + "`"
}

// jsonValue is v as written in JSON, without the quotes around a string.
func jsonValue(v apiextensionsv1.JSON) string {
	var str string
	if err := json.Unmarshal(v.Raw, &str); err == nil {
		return str
	}
	return string(v.Raw)
}

// firstParagraph returns text up to its first blank line, with whitespace runs made single spaces.
func firstParagraph(text string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(text), "\n\n")
	return strings.Join(strings.Fields(first), " ")
}

// cell escapes text for a Markdown table cell: pipes would end the cell, and angle brackets
// outside code spans would read as HTML.
func cell(text string) string {
	var b strings.Builder
	inCode := false
	for _, r := range text {
		switch {
		case r == '`':
			inCode = !inCode
			b.WriteRune(r)
		case r == '|':
			b.WriteString(`\|`)
		case r == '<' && !inCode:
			b.WriteString("&lt;")
		case r == '>' && !inCode:
			b.WriteString("&gt;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchor is the link target GitHub gives a heading.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// apiVersions lists a CRD's served group/versions, in the CRD's order.
func apiVersions(crd *apiextensionsv1.CustomResourceDefinition) []string {
	var out []string
	for _, v := range crd.Spec.Versions {
		if v.Served {
			out = append(out, crd.Spec.Group+"/"+v.Name)
		}
	}
	return out
}

// storageVersion is the version the API server stores, or the first one if none is marked.
func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Storage {
			return &crd.Spec.Versions[i]
		}
	}
	return &crd.Spec.Versions[0]
}

// sortedKeys returns the field names of props in order.
func sortedKeys(props map[string]apiextensionsv1.JSONSchemaProps) []string {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
