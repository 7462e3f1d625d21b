// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

// Package inspect reads an integration's routes and tells which Camel modules they
// need: the components their endpoint URIs name, their data formats and expression
// languages, and the REST DSL. YAML, XML and Java sources are read; other languages
// are left to the user's spec.dependencies. It is pure: it never logs, and the
// runtime fails on what it misses.
package inspect

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/catalog"
	"github.com/caravan-dev/caravan/internal/render"
	"github.com/caravan-dev/caravan/internal/trait"
)

// Result is what an integration's routes need beyond the runtime every kit holds.
type Result struct {
	// Dependencies are the modules the routes use that the runtime lacks, written
	// camel:NAME, sorted, without duplicates.
	Dependencies []string
	// Unknown are the URI schemes the catalog does not know, sorted: a component
	// the user brings in spec.dependencies, or a mistake the runtime reports.
	Unknown []string
	// Kamelets are the names of the Kamelets the routes use (kamelet:NAME), sorted.
	Kamelets []string
	// KameletVersions are the versions the routes name of a Kamelet (kamelet:NAME?kameletVersion=V),
	// sorted, by Kamelet; nil when they name none.
	KameletVersions map[string][]string
	// ServesHTTP tells whether the routes serve HTTP on the runtime's server: they consume from
	// platform-http or rest, or use the REST DSL, as Camel K's service trait tells it.
	ServesHTTP bool
	// Consumers are the endpoints the routes consume from, in the order found.
	Consumers []trait.Consumer
	// KebabCase are the YAML sources and flows that write DSL keys in kebab-case, which the
	// YAML DSL of Camel 4 no longer reads (KebabCaseError).
	KebabCase []KebabCase
}

// KebabCase is one YAML source or flow that writes DSL keys in kebab-case (set-body:).
type KebabCase struct {
	// Where names the source, or spec.flows[N].
	Where string
	// Keys are its kebab-case keys, sorted, each once.
	Keys []string
}

// httpConsumers are the schemes whose consumers the runtime's HTTP server serves.
var httpConsumers = map[string]bool{"platform-http": true, "rest": true}

// maxSourceBytes bounds how much of one source is read, as a ConfigMap bounds it.
const maxSourceBytes = render.MaxConfigMapBytes

// Integration inspects spec's sources and flows against c. A source that cannot be
// read or parsed is an error, joined with the others; what the rest use is still
// returned.
func Integration(c *catalog.Catalog, spec *camelv1.IntegrationSpec) (Result, error) {
	in := newInspection(c)
	var errs []error
	for _, s := range spec.Sources {
		if err := in.source(s); err != nil {
			errs = append(errs, fmt.Errorf("source %s: %w", s.Name, err))
		}
		in.kebabCaseOf("source " + s.Name)
	}
	for i, f := range spec.Flows {
		if err := in.yaml(f.Raw); err != nil {
			errs = append(errs, fmt.Errorf("spec.flows[%d]: %w", i, err))
		}
		in.kebabCaseOf(fmt.Sprintf("spec.flows[%d]", i))
	}
	return in.result(), errors.Join(errs...)
}

// Source inspects one source's content, written in lang, against c.
func Source(c *catalog.Catalog, lang camelv1.Language, content []byte) (Result, error) {
	in := newInspection(c)
	err := in.content(lang, content)
	return in.result(), err
}

// inspection collects what the routes of one integration use.
type inspection struct {
	catalog *catalog.Catalog
	// modules are the Camel modules found so far, runtime ones included.
	modules map[string]bool
	// unknown are the URI schemes the catalog does not know.
	unknown map[string]bool
	// kamelets are the Kamelets the routes use.
	kamelets map[string]bool
	// kameletVersions are the versions named of each Kamelet.
	kameletVersions map[string]map[string]bool
	// http is set when a route serves HTTP.
	http bool
	// consumers are the endpoints routes consume from.
	consumers []trait.Consumer
	// kebab are the kebab-case keys of the YAML read since the last kebabCase.
	kebab map[string]bool
	// kebabCase are the sources and flows that had some.
	kebabCase []KebabCase
}

func newInspection(c *catalog.Catalog) *inspection {
	return &inspection{catalog: c, modules: map[string]bool{}, unknown: map[string]bool{}, kamelets: map[string]bool{}, kebab: map[string]bool{}}
}

// kebabCaseOf records the kebab-case keys read since the last call as where's.
func (in *inspection) kebabCaseOf(where string) {
	if len(in.kebab) == 0 {
		return
	}
	in.kebabCase = append(in.kebabCase, KebabCase{Where: where, Keys: slices.Sorted(maps.Keys(in.kebab))})
	clear(in.kebab)
}

// source inspects one spec.sources entry, when its language is one that is read.
func (in *inspection) source(s camelv1.SourceSpec) error {
	if s.ContentRef != "" {
		return nil
	}
	lang, err := render.SourceLanguage(s)
	if err != nil {
		return nil // The integration's rendering reports it.
	}
	if lang != camelv1.LanguageYAML && lang != camelv1.LanguageXML && lang != camelv1.LanguageJava {
		return nil
	}
	data, err := sourceBytes(s)
	if err != nil {
		return err
	}
	return in.content(lang, data)
}

// content inspects text written in lang.
func (in *inspection) content(lang camelv1.Language, data []byte) error {
	switch lang {
	case camelv1.LanguageYAML:
		return in.yaml(data)
	case camelv1.LanguageXML:
		return in.xml(data)
	case camelv1.LanguageJava:
		in.java(string(data))
	}
	return nil
}

// result returns the modules found that the runtime lacks, and the unknown schemes.
func (in *inspection) result() Result {
	var r Result
	for m := range in.modules {
		if !in.catalog.InRuntime(m) {
			r.Dependencies = append(r.Dependencies, catalog.Dependency(m))
		}
	}
	for s := range in.unknown {
		r.Unknown = append(r.Unknown, s)
	}
	r.Kamelets = slices.Sorted(maps.Keys(in.kamelets))
	for name, versions := range in.kameletVersions {
		if r.KameletVersions == nil {
			r.KameletVersions = map[string][]string{}
		}
		r.KameletVersions[name] = slices.Sorted(maps.Keys(versions))
	}
	r.ServesHTTP = in.http
	r.Consumers = in.consumers
	r.KebabCase = in.kebabCase
	slices.Sort(r.Dependencies)
	slices.Sort(r.Unknown)
	return r
}

// scheme is what a URI scheme may be: a letter, then letters, digits, '+', '.' or '-'.
var scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*$`)

// uri records the component an endpoint URI names. A URI whose scheme is a property
// placeholder or an expression ({{x}}:..., ${header.x}) names none that can be known
// now, and Kamelets are resolved from their own dependencies.
func (in *inspection) uri(u string) {
	name, rest, ok := strings.Cut(strings.TrimSpace(u), ":")
	if !ok || !scheme.MatchString(name) {
		return
	}
	if name == "kamelet" {
		in.kamelet(rest)
		return
	}
	m, ok := in.catalog.Component(name)
	if !ok {
		in.unknown[name] = true
		return
	}
	in.modules[m] = true
	if name == "dataformat" {
		// dataformat:NAME:marshal|unmarshal
		if df, _, _ := strings.Cut(rest, ":"); df != "" {
			in.dataFormat(df, "")
		}
	}
}

// kamelet records the Kamelet of a kamelet: URI's remainder, NAME[/ROUTE][?OPTIONS]. The
// source and sink of a Kamelet's own template name none, nor does a placeholder.
func (in *inspection) kamelet(rest string) {
	rest = strings.TrimPrefix(rest, "//")
	name, _, _ := strings.Cut(rest, "?")
	name, _, _ = strings.Cut(name, "/")
	if name == "" || name == "source" || name == "sink" || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return
	}
	in.kamelets[name] = true
	_, query, _ := strings.Cut(rest, "?")
	if v := kameletVersion(query); v != "" {
		if in.kameletVersions == nil {
			in.kameletVersions = map[string]map[string]bool{}
		}
		if in.kameletVersions[name] == nil {
			in.kameletVersions[name] = map[string]bool{}
		}
		in.kameletVersions[name][v] = true
	}
}

// kameletVersion is the kameletVersion option of a kamelet: URI's query, "" for none.
func kameletVersion(query string) string {
	values, err := url.ParseQuery(query)
	if err != nil {
		return ""
	}
	return values.Get("kameletVersion")
}

// component records the module of a scheme the DSL implies (rest, bean, ...).
func (in *inspection) component(name string) {
	if m, ok := in.catalog.Component(name); ok {
		in.modules[m] = true
	}
}

// consumer records the endpoint a route consumes from, with the YAML DSL's parameters (nil for
// none), then its component.
func (in *inspection) consumer(u string, parameters map[string]any) {
	if name, _, ok := strings.Cut(strings.TrimSpace(u), ":"); ok && httpConsumers[name] {
		in.http = true
	}
	c := trait.Consumer{URI: strings.TrimSpace(u)}
	if len(parameters) > 0 {
		c.Parameters = map[string]string{}
		for k, v := range parameters {
			if f, ok := v.(float64); ok {
				// A YAML number: 3600000, not 3.6e+06.
				c.Parameters[k] = strconv.FormatFloat(f, 'f', -1, 64)
				continue
			}
			c.Parameters[k] = fmt.Sprint(v)
		}
	}
	in.consumers = append(in.consumers, c)
	in.uri(u)
}

// rest records what the REST DSL needs: the rest component and an HTTP server.
func (in *inspection) rest() {
	in.http = true
	in.component("rest")
	in.component("platform-http")
}

// language records the module of an expression language, when it is one.
func (in *inspection) language(name string) bool {
	m, ok := in.catalog.Language(name)
	if ok {
		in.modules[m] = true
	}
	return ok
}

// dataFormat records the module of a data format a route names under model (json,
// avro, ...), with the library it chose, if any. It tries model+library
// (avroJackson) first, then, for json, the library's own name (gson), then model's
// default.
func (in *inspection) dataFormat(model, library string) {
	var names []string
	if library != "" {
		names = append(names, model+library)
		if model == "json" {
			names = append(names, strings.ToLower(library))
		}
	}
	for _, n := range append(names, model) {
		if m, ok := in.catalog.DataFormat(n); ok {
			in.modules[m] = true
			return
		}
	}
}

// sourceBytes reads a source's text: content, which with compression is base64 of
// gzip as kamel run --compression writes it, or rawContent, gzip when compressed.
func sourceBytes(s camelv1.SourceSpec) ([]byte, error) {
	compressed := s.Compression != nil && *s.Compression
	switch {
	case s.Content != "" && compressed:
		zipped, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s.Content))
		if err != nil {
			return nil, fmt.Errorf("compressed content is not base64: %w", err)
		}
		return gunzip(zipped)
	case s.Content != "":
		return []byte(s.Content), nil
	case compressed:
		return gunzip(s.RawContent)
	}
	return s.RawContent, nil
}

func gunzip(zipped []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(zipped))
	if err != nil {
		return nil, fmt.Errorf("compressed content is not gzip: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(r, maxSourceBytes))
	if err != nil {
		return nil, fmt.Errorf("compressed content is not gzip: %w", err)
	}
	return data, nil
}

// KebabCaseError says which sources write DSL keys in kebab-case, and how Camel 4 spells each
// key; nil when none does.
func (r Result) KebabCaseError() error {
	if len(r.KebabCase) == 0 {
		return nil
	}
	parts := make([]string, 0, len(r.KebabCase))
	for _, k := range r.KebabCase {
		keys := make([]string, len(k.Keys))
		for i, key := range k.Keys {
			keys[i] = key + " (write " + CamelCase(key) + ")"
		}
		parts = append(parts, k.Where+": "+strings.Join(keys, ", "))
	}
	return fmt.Errorf("the YAML DSL of Camel %s reads no kebab-case keys, as Camel 3 and older Camel K documentation wrote them: %s",
		catalog.Camel().CamelVersion, strings.Join(parts, "; "))
}

// CamelCase is a kebab-case key in camelCase: set-body is setBody.
func CamelCase(key string) string {
	words := strings.Split(key, "-")
	for i := 1; i < len(words); i++ {
		if words[i] != "" {
			words[i] = strings.ToUpper(words[i][:1]) + words[i][1:]
		}
	}
	return strings.Join(words, "")
}
