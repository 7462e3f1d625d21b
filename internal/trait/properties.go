// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"fmt"
	"strings"
)

// ParseProperties reads a Java properties file into KEY=VALUE entries, in
// the order written, for camel.properties. Blank lines and comments (#, !)
// are skipped, a key ends at the first unescaped '=', ':' or white space,
// and a line ending in an odd number of backslashes goes on on the next. A
// line with a key and no separator has an empty value, as in Java. A key
// holding an escaped '=' is refused: a camel property's key ends at its
// first '='.
func ParseProperties(data string) ([]string, error) {
	var out []string
	lines := strings.Split(strings.ReplaceAll(data, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		first := i + 1
		for continued(line) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		if continued(line) {
			line = line[:len(line)-1]
		}
		key, value := splitProperty(line)
		switch {
		case key == "":
			return nil, fmt.Errorf("line %d: %q has no key", first, lines[first-1])
		case strings.Contains(key, "="):
			// A camel property is KEY=VALUE: its key ends at the first '='.
			return nil, fmt.Errorf("line %d: the key %q holds '=', which no camel property can", first, key)
		}
		out = append(out, key+"="+value)
	}
	return out, nil
}

// continued tells whether line ends in an odd number of backslashes.
func continued(line string) bool {
	n := len(line) - len(strings.TrimRight(line, `\`))
	return n%2 == 1
}

// splitProperty splits a logical line at its first unescaped separator,
// unescaping the key and the value.
func splitProperty(line string) (string, string) {
	var key strings.Builder
	i := 0
	for ; i < len(line); i++ {
		c := line[i]
		if c == '\\' && i+1 < len(line) {
			i++
			key.WriteByte(unescape(line[i]))
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
		key.WriteByte(c)
	}
	rest := strings.TrimLeft(line[i:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	var value strings.Builder
	for j := 0; j < len(rest); j++ {
		if rest[j] == '\\' && j+1 < len(rest) {
			j++
			value.WriteByte(unescape(rest[j]))
			continue
		}
		value.WriteByte(rest[j])
	}
	return key.String(), value.String()
}

func unescape(c byte) byte {
	switch c {
	case 't':
		return '\t'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 'f':
		return '\f'
	}
	return c
}
