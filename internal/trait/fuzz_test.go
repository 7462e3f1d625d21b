// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"strings"
	"testing"
)

// FuzzParseProperties: any text reads into KEY=VALUE entries with a key, or is refused;
// it never panics.
func FuzzParseProperties(f *testing.F) {
	for _, seed := range []string{"a=b\n", "# c\n! d\nk: v\n", "long = one, \\\n two\n", "e\\=k=v", "x\\", "=v", "\r\n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data string) {
		props, err := ParseProperties(data)
		if err != nil {
			return
		}
		for _, p := range props {
			if k, _, ok := strings.Cut(p, "="); !ok || k == "" {
				t.Fatalf("%q read into %q, which has no key", data, p)
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
