// Package maven writes the Maven project that resolves a kit's jars. That is a
// pom that imports Camel's BOM and lists the runtime's own dependencies and the
// integration's, and the settings that say where Maven looks. It is pure: the
// builder pod runs Maven on what it writes.
package maven

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"slices"
	"strings"
)

const (
	// CamelGroup is the group of Camel's own modules.
	CamelGroup = "org.apache.camel"
	// BOM is the artifact that pins every Camel module and its dependencies.
	BOM = "camel-bom"
	// DependencyPlugin is the plugin that resolves and lists a project's jars.
	DependencyPlugin = "org.apache.maven.plugins:maven-dependency-plugin:3.11.0"
)

// Coordinate names one Maven artifact. An empty Version takes the one the BOM pins.
type Coordinate struct {
	GroupID    string
	ArtifactID string
	Version    string
	Type       string
	Classifier string
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

// RuntimeDependencies are the jars every kit holds. They are camel-main, the
// YAML, XML and Java DSLs, Kamelets, the HTTP and management server, health
// checks and the logging binding, without which log: prints nothing.
func RuntimeDependencies() []Coordinate {
	var out []Coordinate
	for _, m := range []string{"camel-main", "camel-yaml-dsl", "camel-xml-io-dsl", "camel-java-joor-dsl",
		"camel-kamelet", "camel-platform-http-main", "camel-health", "camel-timer", "camel-log"} {
		out = append(out, Coordinate{GroupID: CamelGroup, ArtifactID: m})
	}
	return append(out, Coordinate{GroupID: "org.slf4j", ArtifactID: "slf4j-simple", Version: SLF4JVersion})
}

// SLF4JVersion is the logging binding's version; Camel's BOM does not pin one.
const SLF4JVersion = "2.0.20"

// ParseDependency reads a dependency as Camel K writes it: camel:NAME (or
// camel-NAME) for a Camel component at the BOM's version, and
// mvn:GROUP:ARTIFACT[:TYPE[:CLASSIFIER]][:VERSION] for any artifact.
func ParseDependency(dep string) (Coordinate, error) {
	dep = strings.TrimSpace(dep)
	if name, ok := strings.CutPrefix(dep, "camel:"); ok {
		return camelComponent(dep, name)
	}
	if name, ok := strings.CutPrefix(dep, "camel-"); ok {
		return camelComponent(dep, name)
	}
	rest, ok := strings.CutPrefix(dep, "mvn:")
	if !ok {
		return Coordinate{}, fmt.Errorf("dependency %q is neither camel:NAME nor mvn:GROUP:ARTIFACT[:VERSION]", dep)
	}
	parts := strings.Split(rest, ":")
	for _, p := range parts {
		if p == "" || strings.ContainsAny(p, " \t/\\<>&\"'") {
			return Coordinate{}, fmt.Errorf("dependency %q is not a Maven coordinate: write mvn:GROUP:ARTIFACT[:VERSION]", dep)
		}
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
		return Coordinate{}, fmt.Errorf("dependency %q is not a Maven coordinate: write mvn:GROUP:ARTIFACT[:VERSION]", dep)
	}
	return c, nil
}

func camelComponent(dep, name string) (Coordinate, error) {
	if name == "" || strings.ContainsAny(name, ": \t/\\<>&\"'") {
		return Coordinate{}, fmt.Errorf("dependency %q names no Camel component: write camel:NAME, as camel:http", dep)
	}
	return Coordinate{GroupID: CamelGroup, ArtifactID: "camel-" + name}, nil
}

// Project is what one kit's Maven build resolves.
type Project struct {
	// CamelVersion is the version of Camel's BOM.
	CamelVersion string
	// Dependencies are the runtime's and the integration's, in any order.
	Dependencies []Coordinate
	// Repositories are extra Maven repositories, looked up in order after
	// the settings' own.
	Repositories []string
}

// POM writes the project's pom.xml: Camel's BOM imported, each dependency
// once, sorted, so that the same project always gives the same bytes.
func (p Project) POM() ([]byte, error) {
	if p.CamelVersion == "" {
		return nil, fmt.Errorf("the project names no Camel version")
	}
	doc := pom{
		XMLNS: "http://maven.apache.org/POM/4.0.0", ModelVersion: "4.0.0",
		GroupID: "dev.caravan.kit", ArtifactID: "kit", Version: "1", Packaging: "pom",
		Properties: pomProperties{Encoding: "UTF-8"},
	}
	doc.Management.Dependencies = []pomDependency{{GroupID: CamelGroup, ArtifactID: BOM,
		Version: p.CamelVersion, Type: "pom", Scope: "import"}}
	seen := map[string]bool{}
	deps := slices.Clone(p.Dependencies)
	slices.SortFunc(deps, func(a, b Coordinate) int { return strings.Compare(a.String(), b.String()) })
	for _, d := range deps {
		key := d.GroupID + ":" + d.ArtifactID + ":" + d.Type + ":" + d.Classifier
		if seen[key] {
			continue
		}
		seen[key] = true
		doc.Dependencies = append(doc.Dependencies, pomDependency{GroupID: d.GroupID, ArtifactID: d.ArtifactID,
			Version: d.Version, Type: d.Type, Classifier: d.Classifier})
	}
	for i, r := range p.Repositories {
		doc.Repositories = append(doc.Repositories, pomRepository{ID: fmt.Sprintf("repository-%d", i+1), URL: r})
	}
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(&buf)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("writing the pom: %w", err)
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

type pom struct {
	XMLName      xml.Name        `xml:"project"`
	XMLNS        string          `xml:"xmlns,attr"`
	ModelVersion string          `xml:"modelVersion"`
	GroupID      string          `xml:"groupId"`
	ArtifactID   string          `xml:"artifactId"`
	Version      string          `xml:"version"`
	Packaging    string          `xml:"packaging"`
	Properties   pomProperties   `xml:"properties"`
	Management   pomManagement   `xml:"dependencyManagement"`
	Dependencies []pomDependency `xml:"dependencies>dependency"`
	Repositories []pomRepository `xml:"repositories>repository,omitempty"`
}

type pomProperties struct {
	Encoding string `xml:"project.build.sourceEncoding"`
}

type pomManagement struct {
	Dependencies []pomDependency `xml:"dependencies>dependency"`
}

type pomDependency struct {
	GroupID    string `xml:"groupId"`
	ArtifactID string `xml:"artifactId"`
	Version    string `xml:"version,omitempty"`
	Type       string `xml:"type,omitempty"`
	Classifier string `xml:"classifier,omitempty"`
	Scope      string `xml:"scope,omitempty"`
}

type pomRepository struct {
	ID  string `xml:"id"`
	URL string `xml:"url"`
}
