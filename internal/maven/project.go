// Package maven writes the Maven project that resolves a kit's jars: a pom that
// imports the runtime provider's BOM and lists the provider's modules and the
// integration's dependencies. It is pure: the builder pod runs Maven on what it writes.
package maven

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"fmt"
	"slices"
	"strings"

	"github.com/caravan-dev/caravan/internal/runtime"
)

// DependencyPlugin is the plugin that resolves and lists a project's jars.
const DependencyPlugin = "org.apache.maven.plugins:maven-dependency-plugin:3.11.0"

// Project is what one kit's Maven build resolves.
type Project struct {
	// BOMs are the BOMs the project imports, in order, which pin the versions of the
	// dependencies that name none: the runtime provider's for a runtime version.
	BOMs []runtime.Coordinate
	// Build, when set, builds the kit's application with a plugin; nil, the kit is the jars.
	Build *runtime.Build `json:"build,omitempty"`
	// Dependencies are the runtime's and the integration's, in any order.
	Dependencies []runtime.Coordinate
	// Repositories are extra Maven repositories, looked up in order after
	// the settings' own, in Camel K's form (ParseRepository).
	Repositories []string
}

// NewProject is the project of a kit of provider p at a runtime version: its BOMs, its modules,
// then deps, looked up in repos after the settings' own repositories. A Camel component
// (camel:NAME) is p's artifact of it, unless deps also name Camel's own artifact of it with a
// version (mvn:org.apache.camel:camel-NAME:VERSION), which is then taken as written: the way to
// run a component that has no Camel Quarkus extension.
func NewProject(p runtime.Provider, version string, deps []runtime.Coordinate, repos []string) Project {
	pinned := map[string]bool{}
	for _, d := range deps {
		if d.GroupID == runtime.CamelGroup && d.Version != "" {
			pinned[d.ArtifactID] = true
		}
	}
	all := slices.Clone(p.Modules())
	for _, d := range deps {
		if name, ok := strings.CutPrefix(d.ArtifactID, "camel-"); ok && d.GroupID == runtime.CamelGroup && d.Version == "" {
			if pinned[d.ArtifactID] {
				continue
			}
			d = p.Component(name)
		}
		all = append(all, d)
	}
	return Project{BOMs: p.BOMs(version), Build: p.Build(version), Dependencies: all, Repositories: repos}
}

// POM writes the project's pom.xml: the BOMs imported, each dependency once, sorted, and
// the build's plugin, so that the same project always gives the same bytes.
func (p Project) POM() ([]byte, error) {
	if len(p.BOMs) == 0 || slices.ContainsFunc(p.BOMs, func(b runtime.Coordinate) bool { return b.Version == "" }) {
		return nil, fmt.Errorf("the project names no runtime version")
	}
	doc := pom{
		XMLNS: "http://maven.apache.org/POM/4.0.0", ModelVersion: "4.0.0",
		GroupID: "dev.caravan.kit", ArtifactID: "kit", Version: "1", Packaging: "pom",
		Properties: pomProperties{Encoding: "UTF-8"},
	}
	for _, b := range p.BOMs {
		doc.Management.Dependencies = append(doc.Management.Dependencies, pomDependency{GroupID: b.GroupID,
			ArtifactID: b.ArtifactID, Version: b.Version, Type: b.Type, Scope: "import"})
	}
	if b := p.Build; b != nil {
		doc.Packaging = "jar"
		for _, kv := range b.Properties {
			k, v, _ := strings.Cut(kv, "=")
			doc.Properties.More = append(doc.Properties.More, pomProperty{XMLName: xml.Name{Local: k}, Value: v})
		}
		doc.Build = &pomBuild{Plugins: []pomPlugin{{GroupID: b.Plugin.GroupID, ArtifactID: b.Plugin.ArtifactID,
			Version: b.Plugin.Version, Extensions: true,
			Executions: []pomExecution{{ID: "build-kit", Goals: []string{b.Goal}}}}}}
	}
	seen := map[string]bool{}
	deps := slices.Clone(p.Dependencies)
	slices.SortFunc(deps, func(a, b runtime.Coordinate) int { return strings.Compare(a.String(), b.String()) })
	for _, d := range deps {
		key := d.GroupID + ":" + d.ArtifactID + ":" + d.Type + ":" + d.Classifier
		if seen[key] {
			continue
		}
		seen[key] = true
		doc.Dependencies = append(doc.Dependencies, pomDependency{GroupID: d.GroupID, ArtifactID: d.ArtifactID,
			Version: d.Version, Type: d.Type, Classifier: d.Classifier})
	}
	repos, err := ParseRepositories(p.Repositories)
	if err != nil {
		return nil, err
	}
	for i, r := range repos {
		doc.Repositories = append(doc.Repositories, pomRepository{ID: cmp.Or(r.ID, fmt.Sprintf("repository-%d", i+1)), Name: r.Name, URL: r.URL,
			Releases:  pomPolicy{Enabled: r.Releases, ChecksumPolicy: r.ChecksumPolicy},
			Snapshots: pomPolicy{Enabled: r.Snapshots, ChecksumPolicy: r.ChecksumPolicy}})
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
	Build        *pomBuild       `xml:"build,omitempty"`
}

type pomProperties struct {
	Encoding string        `xml:"project.build.sourceEncoding"`
	More     []pomProperty `xml:",any"`
}

type pomProperty struct {
	XMLName xml.Name
	Value   string `xml:",chardata"`
}

type pomBuild struct {
	Plugins []pomPlugin `xml:"plugins>plugin"`
}

type pomPlugin struct {
	GroupID    string         `xml:"groupId"`
	ArtifactID string         `xml:"artifactId"`
	Version    string         `xml:"version"`
	Extensions bool           `xml:"extensions"`
	Executions []pomExecution `xml:"executions>execution"`
}

type pomExecution struct {
	ID    string   `xml:"id"`
	Goals []string `xml:"goals>goal"`
}

// Application is the application.properties of the project's build, one property a line;
// nil without a build. The builder trait's properties reach the build as Maven's -D options.
func (p Project) Application() []byte {
	if p.Build == nil {
		return nil
	}
	var b strings.Builder
	for _, kv := range p.Build.Application {
		b.WriteString(kv + "\n")
	}
	return []byte(b.String())
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
	ID        string    `xml:"id"`
	Name      string    `xml:"name,omitempty"`
	URL       string    `xml:"url"`
	Releases  pomPolicy `xml:"releases"`
	Snapshots pomPolicy `xml:"snapshots"`
}

type pomPolicy struct {
	Enabled        bool   `xml:"enabled"`
	ChecksumPolicy string `xml:"checksumPolicy"`
}
