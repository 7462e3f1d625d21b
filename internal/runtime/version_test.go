// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package runtime

import (
	"strings"
	"testing"
)

func TestCamelKRuntimeVersionsAreRefusedNamingTheCamelVersionTheyStandFor(t *testing.T) {
	for _, c := range []struct{ version, want string }{
		{"4.18.0", ""},
		{"4.8.5", ""},
		{"4.22.0", ""},
		{"3.15.3", "3.15.3 names Camel K's runtime 3.15.3, which runs Camel 4.8.5 on Camel Quarkus: Caravan runs camel-main and takes Camel's own version"},
		{"3.8.1", "which runs Camel 4.4.1"},
		{"3.99.0", "3.99.0 names a Camel K runtime (camel-k-runtime) version"},
		{"1.12.0", "name 4.18.0 (Caravan's), or leave it unset"},
		{"latest", `"latest" is no Camel version`},
		{"4.18.0/evil", "is no Camel version"},
	} {
		err := CheckCamelVersion(c.version)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.version, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want %q", c.version, err, c.want)
		}
	}
}
