// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// KnownLanguages are the source languages of Camel K's API.
var KnownLanguages = []camelv1.Language{
	camelv1.LanguageYAML, camelv1.LanguageXML, camelv1.LanguageJava, camelv1.LanguageGroovy,
	camelv1.LanguageJavaScript, camelv1.LanguageKotlin, camelv1.LanguageJavaShell,
}

// RunnableLanguages are the source languages the runtime loads: camel-main's
// YAML, XML and Java (jOOR) DSLs.
var RunnableLanguages = []camelv1.Language{camelv1.LanguageYAML, camelv1.LanguageXML, camelv1.LanguageJava}

// NotRunnable explains why a known language outside RunnableLanguages cannot run.
func NotRunnable(l camelv1.Language) error {
	return fmt.Errorf("the runtime (camel-main with the YAML, XML and Java DSLs) has no loader for %s sources: "+
		"write the route in YAML, XML or Java", l)
}

// extensions maps file extensions to languages.
var extensions = map[string]camelv1.Language{
	".yaml": camelv1.LanguageYAML, ".yml": camelv1.LanguageYAML, ".xml": camelv1.LanguageXML,
	".java": camelv1.LanguageJava, ".groovy": camelv1.LanguageGroovy, ".js": camelv1.LanguageJavaScript,
	".kts": camelv1.LanguageKotlin, ".jsh": camelv1.LanguageJavaShell,
}

// SourceLanguage is the language of a source: its language field, else the one its file
// extension names. A language outside RunnableLanguages is an error.
func SourceLanguage(s camelv1.SourceSpec) (camelv1.Language, error) {
	l, err := sourceLanguage(s)
	if err == nil && !slices.Contains(RunnableLanguages, l) {
		err = fmt.Errorf("source %s: %w", s.Name, NotRunnable(l))
	}
	return l, err
}

// sourceLanguage is the language a source names, one of KnownLanguages.
func sourceLanguage(s camelv1.SourceSpec) (camelv1.Language, error) {
	if s.Language != "" {
		if slices.Contains(KnownLanguages, s.Language) {
			return s.Language, nil
		}
		return "", fmt.Errorf("source %s: unknown language %q (known: %s)", s.Name, s.Language, knownList())
	}
	ext := path.Ext(s.Name)
	if l, ok := LanguageOf(s.Name); ok {
		return l, nil
	}
	if ext == "" {
		return "", fmt.Errorf("source %s: no language and no file extension: set language (known: %s)", s.Name, knownList())
	}
	return "", fmt.Errorf("source %s: unknown language %q (known: %s)", s.Name, strings.TrimPrefix(ext, "."), knownList())
}

// LanguageOf is the language that the extension of file name names, and
// whether it names one.
func LanguageOf(name string) (camelv1.Language, bool) {
	l, ok := extensions[strings.ToLower(path.Ext(name))]
	return l, ok
}

// Extensions are the file extensions of the languages the runtime loads, sorted.
func Extensions() []string {
	var out []string
	for ext, l := range extensions {
		if slices.Contains(RunnableLanguages, l) {
			out = append(out, ext)
		}
	}
	slices.Sort(out)
	return out
}

func knownList() string {
	names := make([]string, len(RunnableLanguages))
	for i, l := range RunnableLanguages {
		names[i] = string(l)
	}
	return strings.Join(names, ", ")
}

// sourceContent reads a source's bytes and tells whether they belong in BinaryData.
// content is text; with compression: true it is base64 of gzip, as kamel run --compression
// writes it, and is decompressed here (the runtime reads plain files). rawContent is bytes,
// gzip when compressed.
func sourceContent(s camelv1.SourceSpec) ([]byte, bool, error) {
	compressed := s.Compression != nil && *s.Compression
	switch {
	case s.Content != "" && !compressed:
		return []byte(s.Content), false, nil
	case s.Content != "":
		zipped, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s.Content))
		if err != nil {
			return nil, false, fmt.Errorf("compressed content is not base64: %w", err)
		}
		data, err := gunzip(zipped)
		return data, !utf8.Valid(data), err
	case len(s.RawContent) > 0 && compressed:
		data, err := gunzip(s.RawContent)
		return data, true, err
	case len(s.RawContent) > 0:
		return s.RawContent, true, nil
	}
	return nil, false, nil
}

// gunzip decompresses at most MaxConfigMapBytes.
func gunzip(zipped []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(zipped))
	if err != nil {
		return nil, fmt.Errorf("compressed content is not gzip: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxConfigMapBytes+1))
	if err != nil {
		return nil, fmt.Errorf("compressed content is not gzip: %w", err)
	}
	if len(data) > MaxConfigMapBytes {
		return nil, fmt.Errorf("decompressed content is more than the %d bytes a ConfigMap holds", MaxConfigMapBytes)
	}
	return data, nil
}
