// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package kit

import (
	"strings"
	"testing"
)

func TestADependencyNoBuildCanResolveIsRefused(t *testing.T) {
	for deps, want := range map[string]string{
		"camel:http|mvn:org.example:lib:1.0|camel-kafka": "",
		"camel:a b":         `dependency "camel:a b" contains white space or a control character`,
		"camel:http|camel:": `dependency "camel:" names no Camel component`,
		"mvn:org.example":   `dependency "mvn:org.example" is not a Maven coordinate`,
		"mvn::lib:1.0":      `dependency "mvn::lib:1.0" is not a Maven coordinate`,
		"camel:http|  ":     `dependency "  " is empty`,
	} {
		err := ValidateDependencies(strings.Split(deps, "|"))
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: got %v, want %q", deps, err, want)
		}
	}
}
