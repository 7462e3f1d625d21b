// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	"net/url"
	"regexp"
	"strings"
)

// kameletURI matches a kamelet: endpoint with options, up to a quote, a space or an angle bracket.
var kameletURI = regexp.MustCompile(`kamelet:[A-Za-z0-9][A-Za-z0-9.-]*(?:/[A-Za-z0-9.-]+)?\?[^"'\s<>]+`)

// decodeKameletOptions rewrites, in a source's text, each percent- or '+'-encoded option of a
// kamelet: URI as RAW(value decoded), so that the Kamelet's template gets the value decoded, as
// on Camel K: camel-kamelet hands its options to the template as written. In XML, '&' between
// options is written &amp;. A value whose decoded form would need escaping where it is written
// is left as it is.
func decodeKameletOptions(text string, xml bool) string {
	return kameletURI.ReplaceAllStringFunc(text, func(uri string) string {
		sep := "&"
		if xml {
			sep = "&amp;"
		}
		base, query, _ := strings.Cut(uri, "?")
		opts := strings.Split(query, sep)
		for i, opt := range opts {
			name, value, ok := strings.Cut(opt, "=")
			if !ok || strings.HasPrefix(value, "RAW(") || strings.HasPrefix(value, "RAW{") {
				continue
			}
			decoded, err := url.QueryUnescape(value)
			if err != nil || decoded == value || !safeRaw(decoded, xml) {
				continue
			}
			opts[i] = name + "=RAW(" + decoded + ")"
		}
		return base + "?" + strings.Join(opts, sep)
	})
}

// safeRaw tells whether a decoded value can be written in RAW() where URIs are written: in quotes
// of YAML, Java or XML, or unquoted in YAML.
func safeRaw(v string, xml bool) bool {
	if strings.ContainsAny(v, "\"'\\<>#)\n\r\t") || strings.Contains(v, ": ") {
		return false
	}
	return !xml || !strings.Contains(v, "&")
}
