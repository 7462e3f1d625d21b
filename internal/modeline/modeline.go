// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

// Package modeline reads the options that route files carry in "camel-k:" comment lines.
//
// A modeline is a comment in the file's own comment syntax, on any line of the file:
//
//	// camel-k: dependency=camel:http trait=container.port=8080   (Java, Groovy, JavaScript, Kotlin)
//	# camel-k: property=my.key=value                             (YAML, properties)
//	<!-- camel-k: dependency=camel:http -->                       (XML)
//
// Its options are words NAME or NAME=VALUE separated by spaces; single and double quotes
// keep spaces in a value, as a shell does. The package only reads them: which options a
// command accepts, and how they combine with its flags, is the command's concern.
package modeline

import (
	"fmt"
	"path"
	"strings"
)

// Option is one NAME or NAME=VALUE word of a modeline.
type Option struct {
	// Name is the text before the first '='.
	Name string
	// Value is the text after the first '='; empty when the word has none.
	Value string
	// Line is the 1-based line of the file that holds the option.
	Line int
}

// String is the option as written in a modeline, without quotes.
func (o Option) String() string {
	if o.Value == "" {
		return o.Name
	}
	return o.Name + "=" + o.Value
}

// Error is a modeline that cannot be read; it names the file and the line.
type Error struct {
	File   string
	Line   int
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d: malformed modeline: %s", e.File, e.Line, e.Reason)
}

// Style is the comment syntax a file's modelines are written in.
type Style int

const (
	// Slashes is a line comment "// camel-k: ...".
	Slashes Style = iota + 1
	// Hash is a line comment "# camel-k: ..." (one or more '#').
	Hash
	// XMLComment is a comment "<!-- camel-k: ... -->" on one line.
	XMLComment
)

// styles maps file extensions to the comment syntax of their modelines.
var styles = map[string]Style{
	".java": Slashes, ".groovy": Slashes, ".js": Slashes, ".jsh": Slashes, ".kts": Slashes, ".kt": Slashes,
	".yaml": Hash, ".yml": Hash, ".properties": Hash,
	".xml": XMLComment,
}

// StyleOf returns the modeline syntax of a file, from its extension, and whether it has one.
func StyleOf(file string) (Style, bool) {
	s, ok := styles[strings.ToLower(path.Ext(file))]
	return s, ok
}

// Parse returns the options of every modeline of content, in the order they appear.
// file names the content in errors and decides the comment syntax by its extension.
func Parse(file string, content []byte) ([]Option, error) {
	style, ok := StyleOf(file)
	if !ok {
		return nil, fmt.Errorf("%s: no modeline syntax for files of type %q", file, path.Ext(file))
	}
	var opts []Option
	for i, line := range strings.Split(string(content), "\n") {
		bodies, err := modelineBodies(style, strings.TrimSuffix(line, "\r"))
		if err != "" {
			return nil, &Error{File: file, Line: i + 1, Reason: err}
		}
		for _, body := range bodies {
			lineOpts, err := parseBody(body, i+1)
			if err != "" {
				return nil, &Error{File: file, Line: i + 1, Reason: err}
			}
			opts = append(opts, lineOpts...)
		}
	}
	return opts, nil
}

// modelineBodies returns the text after "camel-k:" of each modeline on line, or the
// reason the line starts a modeline it does not finish.
func modelineBodies(style Style, line string) ([]string, string) {
	switch style {
	case Slashes:
		rest, ok := strings.CutPrefix(trimSpace(line), "//")
		if body, ok := afterMarker(rest, ok); ok {
			return []string{body}, ""
		}
	case Hash:
		rest := trimSpace(line)
		if strings.HasPrefix(rest, "#") {
			if body, ok := afterMarker(strings.TrimLeft(rest, "#"), true); ok {
				return []string{body}, ""
			}
		}
	case XMLComment:
		return xmlBodies(line)
	}
	return nil, ""
}

// xmlBodies returns the modelines of the XML comments that open on line.
func xmlBodies(line string) ([]string, string) {
	var bodies []string
	for {
		_, rest, found := strings.Cut(line, "<!--")
		if !found {
			return bodies, ""
		}
		body, isModeline := afterMarker(rest, true)
		if !isModeline {
			_, line, _ = strings.Cut(rest, "-->")
			continue
		}
		inner, after, closed := strings.Cut(body, "-->")
		if !closed {
			return nil, `an XML modeline must end with "-->" on the same line`
		}
		bodies = append(bodies, inner)
		line = after
	}
}

// afterMarker returns what follows "camel-k" and a colon (spaces allowed around both)
// at the start of s, and whether s starts so; ok false passes through.
func afterMarker(s string, ok bool) (string, bool) {
	if !ok {
		return "", false
	}
	rest, ok := strings.CutPrefix(trimSpace(s), "camel-k")
	if !ok {
		return "", false
	}
	rest, ok = strings.CutPrefix(trimSpace(rest), ":")
	return rest, ok
}

// parseBody splits a modeline's text into options, or returns why it cannot.
func parseBody(body string, line int) ([]Option, string) {
	words, err := splitWords(body)
	if err != "" {
		return nil, err
	}
	if len(words) == 0 {
		return nil, `no options after "camel-k:"`
	}
	opts := make([]Option, 0, len(words))
	for _, w := range words {
		name, value, _ := strings.Cut(w, "=")
		if reason := checkName(name, w); reason != "" {
			return nil, reason
		}
		opts = append(opts, Option{Name: name, Value: value, Line: line})
	}
	return opts, ""
}

// checkName returns why name cannot be an option's name, or "".
func checkName(name, word string) string {
	switch {
	case name == "":
		return fmt.Sprintf("%q has no option name before '='", word)
	case strings.HasPrefix(name, "-"):
		return fmt.Sprintf("%q: write option names without dashes, as in dependency=camel:http", word)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Sprintf("%q: an option name is letters, digits and '-'", word)
		}
	}
	return ""
}

// splitWords splits s at unquoted spaces, dropping empty words. Single quotes keep text as
// it is, double quotes keep it but for \" and \\, and a backslash outside them keeps the next
// character.
func splitWords(s string) ([]string, string) {
	var words []string
	var word strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isSpace(c):
			if word.Len() > 0 {
				words = append(words, word.String())
			}
			word.Reset()
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, "a single quote is not closed"
			}
			word.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			n, ok := readDoubleQuoted(s[i+1:], &word)
			if !ok {
				return nil, "a double quote is not closed"
			}
			i += n
		case c == '\\':
			if i+1 == len(s) {
				return nil, "a backslash ends the line"
			}
			i++
			word.WriteByte(s[i])
		default:
			word.WriteByte(c)
		}
	}
	if word.Len() > 0 {
		words = append(words, word.String())
	}
	return words, ""
}

// readDoubleQuoted copies s up to its closing double quote into word, unescaping \" and
// \\; it returns how many bytes it read, the quote included, and whether it found one.
func readDoubleQuoted(s string, word *strings.Builder) (int, bool) {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			return i + 1, true
		case s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\'):
			i++
		}
		word.WriteByte(s[i])
	}
	return 0, false
}

// ExpandEnv replaces each ${NAME} of value with the variable NAME as lookup returns it;
// a variable that is unset or empty is an error. {{env:NAME}} is left for the runtime.
func ExpandEnv(value string, lookup func(string) (string, bool)) (string, error) {
	var out strings.Builder
	for {
		before, rest, found := strings.Cut(value, "${")
		out.WriteString(before)
		if !found {
			return out.String(), nil
		}
		name, after, closed := strings.Cut(rest, "}")
		if !closed {
			return "", fmt.Errorf("%q: ${ is not closed by }", value)
		}
		v, ok := lookup(name)
		if !ok || v == "" {
			return "", fmt.Errorf("environment variable %s is not set", name)
		}
		out.WriteString(v)
		value = after
	}
}

func trimSpace(s string) string { return strings.TrimLeft(s, " \t\f\v\r") }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r' }
