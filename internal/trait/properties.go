// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"

	"github.com/magiconair/properties"
)

// Property is one key and value of Java properties text, as Java reads them.
type Property struct {
	Key   string
	Value string
}

// Entry writes the property as one line of a properties file that Java reads back as Key and
// Value: the form of a camel.properties entry, which the operator writes into
// application.properties as it is. Backslashes, line breaks, the key's separators and blanks,
// a leading '#' or '!' of the key and a leading blank of the value are escaped, and every
// character outside printable ASCII is written \uXXXX, as java.util.Properties.store does:
// camel-main reads the file as ISO-8859-1.
func (p Property) Entry() string {
	return escapeProperty(p.Key, true) + "=" + escapeProperty(p.Value, false)
}

// ParseProperties reads Java properties text into its properties, in the order their keys
// first appear, with java.util.Properties' rules: comments (# and !), continuation lines,
// the separators '=', ':' and white space, and the escapes, \uXXXX among them. A key set
// twice keeps its last value. Placeholders ({{...}}, ${...}) stay as written. A line
// without a key (one that starts with '=' or ':') is refused: a camel property needs one.
func ParseProperties(data string) ([]Property, error) {
	loader := properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}
	props, err := loader.LoadBytes([]byte(data))
	if err != nil {
		return nil, fmt.Errorf("not Java properties: %w", err)
	}
	out := make([]Property, 0, props.Len())
	for _, key := range props.Keys() {
		if key == "" {
			return nil, errors.New("a line has no key: it starts with '=' or ':'")
		}
		value, _ := props.Get(key)
		out = append(out, Property{Key: key, Value: value})
	}
	return out, nil
}

// PropertyKey returns the key of a camel.properties entry as Java reads it, or "" when the
// entry holds none (a comment, or text that is no properties line): "a\=b = 1" has the key "a=b".
func PropertyKey(entry string) string {
	props, err := ParseProperties(entry)
	if err != nil || len(props) == 0 {
		return ""
	}
	return props[0].Key
}

// escapeProperty escapes s as the key (key true) or the value of a properties line.
func escapeProperty(s string, key bool) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\f':
			b.WriteString(`\f`)
		case key && strings.ContainsRune("=: ", r), key && i == 0 && (r == '#' || r == '!'), !key && i == 0 && r == ' ':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r > 0x7e:
			b.WriteString(UnicodeEscape(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// UnicodeEscape is r as Java properties text escapes it: \uXXXX, or the two of its UTF-16 pair
// outside the Basic Multilingual Plane.
func UnicodeEscape(r rune) string {
	var b strings.Builder
	for _, u := range utf16.Encode([]rune{r}) {
		fmt.Fprintf(&b, `\u%04x`, u)
	}
	return b.String()
}
