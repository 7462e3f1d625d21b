// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseProperties: any text reads into properties with a key, or is refused; it never
// panics, and each property's entry reads back as that property.
func FuzzParseProperties(f *testing.F) {
	for _, seed := range []string{"a=b\n", "# c\n! d\nk: v\n", "long = one, \\\n two\n", "e\\=k=v", "x\\", "=v", "\r\n",
		"u=caf\\u00e9", "a={{b}} ${c}"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data string) {
		props, err := ParseProperties(data)
		if err != nil {
			return
		}
		for _, p := range props {
			if p.Key == "" {
				t.Fatalf("%q read into %q, which has no key", data, p)
			}
			if strings.ContainsFunc(p.Key+p.Value, func(r rune) bool { return r > 0xffff || r == utf8.RuneError }) {
				continue // written as \u surrogates, which the library does not join, or not UTF-8
			}
			if back, err := ParseProperties(p.Entry()); err != nil || len(back) != 1 || back[0] != p {
				t.Fatalf("%q: the entry %q of %q read back as %q (%v)", data, p.Entry(), p, back, err)
			}
		}
	})
}

// FuzzFromFlags: any -t setting becomes a trait tree that Parse accepts, or is refused
// with an error; it never panics.
func FuzzFromFlags(f *testing.F) {
	for _, seed := range []string{"container.port=8080", "mount.configs=[configmap:a, secret:b]", "a.b.c=1", "x=y", "health.enabled=true"} {
		f.Add(seed, "k=v")
	}
	f.Fuzz(func(t *testing.T, setting, property string) {
		traits, err := FromFlags(Flags{Settings: []string{setting}, Properties: []string{property}})
		if err != nil {
			return
		}
		if _, err := Parse(traits); err != nil {
			t.Fatalf("-t %q -p %q gave traits the operator refuses: %v", setting, property, err)
		}
	})
}
