package runcmd

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzParseEndpoint: any endpoint argument of bind is a Kamelet or Integration reference
// with a valid name, a Camel URI, or an error; it never panics.
func FuzzParseEndpoint(f *testing.F) {
	for _, seed := range []string{"timer-source", "timer-source?message=hi&period=1", "kamelet:log-sink", "integration/a",
		"log:info?x=1", ":x", "a?b", "a?=", "%zz"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, props, err := parseEndpoint(s)
		if err != nil {
			return
		}
		switch {
		case e.Ref != nil && e.Ref.Kind == "Kamelet" && len(validation.IsDNS1123Label(e.Ref.Name)) > 0:
			t.Fatalf("%q gave the Kamelet name %q", s, e.Ref.Name)
		case e.Ref == nil && e.URI == nil:
			t.Fatalf("%q gave an empty endpoint", s)
		case e.URI != nil && len(props) > 0:
			t.Fatalf("%q gave a URI with inline properties apart", s)
		}
		for k := range props {
			if k == "" {
				t.Fatalf("%q gave a property without a key", s)
			}
		}
	})
}
