// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package runtime

import (
	"fmt"
	"strings"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// camelKRuntimes are the Camel versions of Camel K's runtimes (camel-k-runtime), as the catalogs
// of Camel K's releases 2.1 to 2.10 give them.
var camelKRuntimes = map[string]string{
	"3.2.0": "4.0.0", "3.2.3": "4.0.3", "3.8.1": "4.4.1",
	"3.15.0": "4.8.0", "3.15.2": "4.8.3", "3.15.3": "4.8.5",
}

// CheckCamelVersion refuses a runtime version that is no Camel version Caravan can build with.
// Camel K users name Camel K's runtime (camel-k-runtime 3.15.3, say) where Caravan takes Camel's
// own version (4.18.0): such a version is refused, naming the Camel version it stands for. A
// Camel version of 4 or later is taken as it is; whether Maven resolves it is Maven's answer.
func CheckCamelVersion(v string) error {
	parsed, err := utilversion.ParseGeneric(v)
	if err != nil || strings.ContainsAny(v, " /\\") {
		return fmt.Errorf("%q is no Camel version: name one such as %s, Caravan's", v, DefaultCamelVersion)
	}
	if parsed.Major() >= 4 {
		return nil
	}
	stands := "a Camel K runtime (camel-k-runtime) version"
	if camel, ok := camelKRuntimes[v]; ok {
		stands = fmt.Sprintf("Camel K's runtime %s, which runs Camel %s on Camel Quarkus", v, camel)
	}
	return fmt.Errorf("%s names %s: Caravan runs camel-main and takes Camel's own version, 4.0 or later: "+
		"name %s (Caravan's), or leave it unset", v, stands, DefaultCamelVersion)
}
