// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package runtime

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// CamelGroup is the Maven group of Camel's own modules.
const CamelGroup = "org.apache.camel"

// Coordinate names one Maven artifact. An empty Version takes the one the BOM pins.
type Coordinate struct {
	GroupID    string `json:"groupId"`
	ArtifactID string `json:"artifactId"`
	Version    string `json:"version,omitempty"`
	Type       string `json:"type,omitempty"`
	Classifier string `json:"classifier,omitempty"`
}

// String writes c as group:artifact[:type[:classifier]][:version].
func (c Coordinate) String() string {
	parts := []string{c.GroupID, c.ArtifactID}
	if c.Type != "" {
		parts = append(parts, c.Type)
		if c.Classifier != "" {
			parts = append(parts, c.Classifier)
		}
	}
	if c.Version != "" {
		parts = append(parts, c.Version)
	}
	return strings.Join(parts, ":")
}

// ParseDependency reads a dependency as Camel K writes it: camel:NAME (or camel-NAME) for a
// Camel component at the BOM's version, and mvn:GROUP:ARTIFACT[:TYPE[:CLASSIFIER]][:VERSION]
// for any artifact. Surrounding white space is ignored. It is the only rule: the CLI, the
// integration and kit controllers and the Maven project all read dependencies with it.
func ParseDependency(dep string) (Coordinate, error) {
	c, err := parseDependency(strings.TrimSpace(dep))
	if err != nil {
		return Coordinate{}, fmt.Errorf("dependency %q %w", dep, err)
	}
	return c, nil
}

// unbuiltForms are kamel's dependency forms that Caravan's builds do not take, with what to write
// instead.
var unbuiltForms = map[string]string{
	"camel-quarkus":  "camel-main kits take Camel's components as camel:NAME (camel:log for camel-quarkus:log)",
	"camel-k":        "Camel K's own runtime modules have no camel-main counterpart; remove it",
	"bom":            "a kit imports the BOM of the platform's Camel version only; name each artifact with its version as mvn:GROUP:ARTIFACT:VERSION",
	"github":         "JitPack builds are not resolved; publish the artifact to a Maven repository and name it as mvn:GROUP:ARTIFACT:VERSION",
	"file":           "a local file is not uploaded; put it in a ConfigMap and add it with --resource and jvm.classpath, or publish it to a Maven repository",
	"registry-image": "kits are built from Maven artifacts; name the artifact as mvn:GROUP:ARTIFACT:VERSION",
}

func parseDependency(dep string) (Coordinate, error) {
	switch {
	case dep == "":
		return Coordinate{}, errors.New("is empty")
	case strings.ContainsFunc(dep, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		return Coordinate{}, errors.New("contains white space or a control character")
	}
	if name, ok := strings.CutPrefix(dep, "camel:"); ok {
		return camelComponent(name)
	}
	if kind, _, ok := strings.Cut(dep, ":"); ok && unbuiltForms[kind] != "" {
		return Coordinate{}, fmt.Errorf("is kamel's %s: form, which Caravan does not build: %s", kind, unbuiltForms[kind])
	}
	if name, ok := strings.CutPrefix(dep, "camel-"); ok {
		return camelComponent(name)
	}
	rest, ok := strings.CutPrefix(dep, "mvn:")
	if !ok {
		return Coordinate{}, errors.New("is neither camel:NAME nor mvn:GROUP:ARTIFACT[:VERSION]")
	}
	notCoordinate := errors.New("is not a Maven coordinate: write mvn:GROUP:ARTIFACT[:VERSION]")
	parts := strings.Split(rest, ":")
	if slices.ContainsFunc(parts, func(p string) bool { return p == "" || strings.ContainsAny(p, `/\<>&"'`) }) {
		return Coordinate{}, notCoordinate
	}
	c := Coordinate{GroupID: parts[0]}
	switch len(parts) {
	case 2:
		c.ArtifactID = parts[1]
	case 3:
		c.ArtifactID, c.Version = parts[1], parts[2]
	case 4:
		c.ArtifactID, c.Type, c.Version = parts[1], parts[2], parts[3]
	case 5:
		c.ArtifactID, c.Type, c.Classifier, c.Version = parts[1], parts[2], parts[3], parts[4]
	default:
		return Coordinate{}, notCoordinate
	}
	return c, nil
}

func camelComponent(name string) (Coordinate, error) {
	if name == "" || strings.ContainsAny(name, `:/\<>&"'`) {
		return Coordinate{}, errors.New("names no Camel component: write camel:NAME, as camel:http")
	}
	return Main.Component(name), nil
}

// ParseDependencies reads every dependency with ParseDependency, in order, and refuses the
// first one that is not a dependency.
func ParseDependencies(deps []string) ([]Coordinate, error) {
	out := make([]Coordinate, 0, len(deps))
	for _, d := range deps {
		c, err := ParseDependency(d)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// NormalizeDependency writes a dependency the one way a kit records it: trimmed, and a
// Camel component as camel:NAME whether it was written camel:NAME or camel-NAME.
func NormalizeDependency(dep string) string {
	dep = strings.TrimSpace(dep)
	if name, ok := strings.CutPrefix(dep, "camel-"); ok && name != "" {
		return "camel:" + name
	}
	return dep
}
