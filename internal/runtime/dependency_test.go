// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package runtime

import (
	"strings"
	"testing"
)

func TestDependenciesAreReadAsCamelKWritesThem(t *testing.T) {
	for dep, want := range map[string]string{
		"camel:http":                                  "org.apache.camel:camel-http",
		"camel-jackson":                               "org.apache.camel:camel-jackson",
		" camel:kafka ":                               "org.apache.camel:camel-kafka",
		"mvn:org.apache.commons:commons-lang3":        "org.apache.commons:commons-lang3",
		"mvn:org.example:lib:1.0":                     "org.example:lib:1.0",
		"mvn:org.example:lib:jar:1.0":                 "org.example:lib:jar:1.0",
		"mvn:org.example:lib:jar:tests:1.0":           "org.example:lib:jar:tests:1.0",
		"mvn:org.apache.commons:commons-lang3:3.17.0": "org.apache.commons:commons-lang3:3.17.0",
	} {
		got, err := ParseDependency(dep)
		if err != nil || got.String() != want {
			t.Errorf("%q: got %q, %v; want %q", dep, got, err, want)
		}
	}
}

func TestADependencyThatIsNoCoordinateIsRefusedWithWhatToWrite(t *testing.T) {
	for dep, want := range map[string]string{
		"":                        `dependency "" is empty`,
		"  ":                      `dependency "  " is empty`,
		"camel:a b":               `dependency "camel:a b" contains white space or a control character`,
		"mvn:org.example:lib:1\n": "", // trailing white space is trimmed
		"mvn:a\tb:c":              "contains white space or a control character",
		"camel:":                  `dependency "camel:" names no Camel component: write camel:NAME`,
		"camel-":                  "names no Camel component",
		"camel:a:b":               "names no Camel component",
		"mvn:org.example":         `dependency "mvn:org.example" is not a Maven coordinate: write mvn:GROUP:ARTIFACT[:VERSION]`,
		"mvn::lib:1.0":            "is not a Maven coordinate",
		"mvn:a:b:c:d:e:f":         "is not a Maven coordinate",
		"mvn:org.example:<lib>:1": "is not a Maven coordinate",
		"github:apache/camel":     "is kamel's github: form, which Caravan does not build: JitPack builds are not resolved",
		"camel-quarkus:log":       "camel-main kits take Camel's components as camel:NAME (camel:log for camel-quarkus:log)",
		"bom:org.example/bom/1.0": "is kamel's bom: form",
		"acme:lib":                "is neither camel:NAME nor mvn:GROUP:ARTIFACT[:VERSION]",
		"http":                    "is neither camel:NAME nor mvn:",
	} {
		_, err := ParseDependency(dep)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: got %v, want no error", dep, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: got %v, want an error saying %q", dep, err, want)
		}
	}
}

func TestParseDependenciesRefusesTheFirstThatIsNoDependency(t *testing.T) {
	got, err := ParseDependencies([]string{"camel:http", "mvn:org.example:lib:1.0", "camel-kafka"})
	if err != nil || len(got) != 3 || got[2].ArtifactID != "camel-kafka" {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := ParseDependencies([]string{"camel:http", "mvn:x", "camel:"}); err == nil || !strings.Contains(err.Error(), `"mvn:x"`) {
		t.Fatalf("got %v, want the error of mvn:x", err)
	}
}

func TestADependencyIsRecordedOneWay(t *testing.T) {
	for dep, want := range map[string]string{
		" camel-kafka ":           "camel:kafka",
		"camel:kafka":             "camel:kafka",
		"camel-":                  "camel-",
		"mvn:org.example:lib:1.0": "mvn:org.example:lib:1.0",
	} {
		if got := NormalizeDependency(dep); got != want {
			t.Errorf("%q: got %q, want %q", dep, got, want)
		}
	}
}

func FuzzParseDependency(f *testing.F) {
	for _, seed := range []string{"camel:http", "camel-kafka", "mvn:org.example:lib:jar:tests:1.0", "mvn:", "camel:a b", "github:x/y"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, dep string) {
		c, err := ParseDependency(dep)
		if err != nil {
			return
		}
		// What is accepted writes a coordinate Maven reads back the same.
		if c.GroupID == "" || c.ArtifactID == "" || strings.ContainsAny(c.String(), " \t\n<>&\"'") {
			t.Fatalf("%q gave the coordinate %q", dep, c)
		}
		again, err := ParseDependency("mvn:" + c.String())
		if err != nil || again != c {
			t.Fatalf("%q gave %q, which reads back as %q, %v", dep, c, again, err)
		}
	})
}
