// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package inspect

import (
	"maps"
	"regexp"
	"slices"
	"strings"
)

var (
	// javaEndpoint matches the Java DSL calls whose first argument is an endpoint
	// URI written as a string literal.
	javaEndpoint = regexp.MustCompile(`\b(?:from|fromF|to|toD|toF|enrich|pollEnrich|wireTap|poll|deadLetterChannel|` +
		`interceptFrom|interceptSendToEndpoint)\s*\(\s*"([^"]+)"`)
	// javaFrom matches a route's consumer, from("URI") or fromF("URI", ...).
	javaFrom = regexp.MustCompile(`\bfromF?\s*\(\s*"([^"]+)"`)
	// javaRest matches the REST DSL's entry points.
	javaRest = regexp.MustCompile(`\brest(?:Configuration)?\s*\(`)
	// javaOpenAPI matches a REST DSL that serves an OpenAPI contract.
	javaOpenAPI = regexp.MustCompile(`\.openApi\s*\(`)
	// javaBean matches the bean EIP.
	javaBean = regexp.MustCompile(`\.bean\s*\(`)
	// javaLanguageCall matches language("name", ...).
	javaLanguageCall = regexp.MustCompile(`\blanguage\s*\(\s*"([\w-]+)"`)
	// javaDataFormat matches .marshal().MODEL(ARGS) and .unmarshal().MODEL(ARGS).
	javaDataFormat = regexp.MustCompile(`\.(?:un)?marshal\s*\(\s*\)\s*\.\s*(\w+)\s*\(([^)]*)\)`)
	// javaLibrary matches a data format library named by its enum (JsonLibrary.Gson).
	javaLibrary = regexp.MustCompile(`\b(\w+)Library\.(\w+)`)
)

// javaLanguages matches a call named after one of the catalog's expression languages,
// as the Java DSL's expression builders are (jsonpath("$.a"), .groovy("...")).
func (in *inspection) javaLanguages() *regexp.Regexp {
	names := slices.Sorted(maps.Keys(in.catalog.Languages))
	for i, n := range names {
		names[i] = regexp.QuoteMeta(n)
	}
	return regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\s*\(`)
}

// java inspects a Java DSL source. It reads string literals where the DSL takes
// them: a URI built at run time, or held in a constant, is not seen.
func (in *inspection) java(src string) {
	for _, m := range javaEndpoint.FindAllStringSubmatch(src, -1) {
		in.uri(m[1])
	}
	for _, m := range javaFrom.FindAllStringSubmatch(src, -1) {
		in.consumer(m[1], nil)
	}
	if javaRest.MatchString(src) {
		in.rest()
	}
	if javaOpenAPI.MatchString(src) {
		in.component("rest-openapi")
	}
	if javaBean.MatchString(src) {
		in.component("bean")
	}
	for _, m := range javaLanguageCall.FindAllStringSubmatch(src, -1) {
		in.language(m[1])
	}
	for _, m := range in.javaLanguages().FindAllStringSubmatch(src, -1) {
		in.language(m[1])
	}
	for _, m := range javaDataFormat.FindAllStringSubmatch(src, -1) {
		library := ""
		if l := javaLibrary.FindStringSubmatch(m[2]); l != nil {
			library = l[2]
		}
		in.dataFormat(m[1], library)
	}
}
