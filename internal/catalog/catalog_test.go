// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package catalog

import (
	"slices"
	"testing"

	"github.com/caravan-dev/caravan/internal/runtime"
)

func TestTheTableIsTheDefaultCamelReleasesForTheRuntimeSet(t *testing.T) {
	c := Camel()
	if c.CamelVersion != runtime.DefaultCamelVersion {
		t.Errorf("the table is Camel %s's, kits default to %s: run make catalog", c.CamelVersion, runtime.DefaultCamelVersion)
	}
	var roots []string
	for _, d := range runtime.Main.Modules() {
		roots = append(roots, d.GroupID+":"+d.ArtifactID)
	}
	slices.Sort(roots)
	if !slices.Equal(c.Runtime.Roots, roots) {
		t.Errorf("the table was made for the runtime set %v, which is now %v: run make catalog", c.Runtime.Roots, roots)
	}
	if !slices.IsSorted(c.Runtime.Modules) {
		t.Errorf("the runtime's modules are not sorted: %v", c.Runtime.Modules)
	}
}

func TestSchemesMapToTheirModules(t *testing.T) {
	for _, tc := range []struct {
		scheme, module string
		inRuntime      bool
	}{
		{"kafka", "camel-kafka", false},
		{"aws2-s3", "camel-aws2-s3", false},
		{"jms", "camel-jms", false},
		{"http", "camel-http", false},
		{"https", "camel-http", false},
		{"smtps", "camel-mail", false},
		{"rest", "camel-rest", false},
		{"direct", "camel-direct", false},
		{"seda", "camel-seda", false},
		{"bean", "camel-bean", false},
		{"platform-http", "camel-platform-http", true},
		{"timer", "camel-timer", true},
		{"log", "camel-log", true},
		{"kamelet", "camel-kamelet", true},
	} {
		t.Run(tc.scheme+" is "+tc.module, func(t *testing.T) {
			c := Camel()
			got, ok := c.Component(tc.scheme)
			if !ok || got != tc.module {
				t.Fatalf("Component(%q) = %q, %v; want %q", tc.scheme, got, ok, tc.module)
			}
			if c.InRuntime(got) != tc.inRuntime {
				t.Errorf("InRuntime(%q) = %v, want %v", got, !tc.inRuntime, tc.inRuntime)
			}
		})
	}
}

func TestAnUnknownSchemeMapsToNothing(t *testing.T) {
	if m, ok := Camel().Component("no-such-scheme"); ok {
		t.Errorf("Component(no-such-scheme) = %q, want none", m)
	}
}

func TestDataFormatsAndLanguagesMapToTheirModules(t *testing.T) {
	c := Camel()
	for name, want := range map[string]string{
		"json": "camel-jackson", "jackson": "camel-jackson", "gson": "camel-gson", "csv": "camel-csv",
		"avro": "camel-avro", "avroJackson": "camel-jackson-avro", "yaml": "camel-snakeyaml", "bindy": "camel-bindy",
	} {
		if got, ok := c.DataFormat(name); !ok || got != want {
			t.Errorf("DataFormat(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	for name, want := range map[string]string{
		"jsonpath": "camel-jsonpath", "groovy": "camel-groovy", "xpath": "camel-xpath", "method": "camel-bean",
		"bean": "camel-bean", "xquery": "camel-saxon", "simple": "camel-core-languages",
	} {
		if got, ok := c.Language(name); !ok || got != want {
			t.Errorf("Language(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	if !c.InRuntime("camel-core-languages") {
		t.Error("simple, constant and header are not in the runtime")
	}
}

func TestAModuleIsWrittenAsACamelDependencyMavenResolves(t *testing.T) {
	for module, want := range map[string]string{"camel-aws2-s3": "camel:aws2-s3", "camel-jackson-avro": "camel:jackson-avro"} {
		got := Dependency(module)
		if got != want {
			t.Errorf("Dependency(%q) = %q, want %q", module, got, want)
		}
		c, err := runtime.ParseDependency(got)
		if err != nil || c.GroupID != runtime.CamelGroup || c.ArtifactID != module {
			t.Errorf("ParseDependency(%q) = %v, %v; want %s:%s", got, c, err, runtime.CamelGroup, module)
		}
	}
}
