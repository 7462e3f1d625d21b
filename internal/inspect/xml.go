// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package inspect

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"slices"
)

// xml inspects an XML DSL document: every uri and deadLetterUri attribute is an
// endpoint URI, and elements name the REST DSL, languages and data formats.
func (in *inspection) xml(data []byte) error {
	d := xml.NewDecoder(bytes.NewReader(data))
	var stack []string // names of the open elements, the innermost last
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			in.xmlElement(t, stack)
			stack = append(stack, t.Name.Local)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			// <enrich><constant>URI</constant></enrich>: a constant endpoint.
			if n := len(stack); n >= 2 && stack[n-1] == "constant" &&
				(stack[n-2] == "enrich" || stack[n-2] == "pollEnrich") {
				in.uri(string(t))
			}
		}
	}
}

// xmlElement inspects one start element, inside the open elements of stack.
func (in *inspection) xmlElement(e xml.StartElement, stack []string) {
	for _, a := range e.Attr {
		switch {
		case a.Name.Local == "uri" && e.Name.Local == "from":
			in.consumer(a.Value, nil)
		case a.Name.Local == "uri" || a.Name.Local == "deadLetterUri":
			in.uri(a.Value)
		}
	}
	parent := ""
	if len(stack) > 0 {
		parent = stack[len(stack)-1]
	}
	switch name := e.Name.Local; {
	case name == "rest" || name == "restConfiguration":
		in.rest()
	case name == "openApi":
		in.component("rest-openapi")
	case parent == "marshal" || parent == "unmarshal":
		in.dataFormat(name, attr(e, "library"))
	case name == "language":
		in.language(attr(e, "language"))
	case name == "bean":
		// The bean EIP in a route; a <bean> elsewhere defines a bean.
		if slices.Contains(stack, "route") || slices.Contains(stack, "routeTemplate") {
			in.component("bean")
		}
	default:
		in.language(name)
	}
}

// attr returns the value of e's attribute name, or "".
func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}
