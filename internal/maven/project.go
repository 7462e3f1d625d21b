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
	// BOM is the BOM the project imports, which pins the versions of the dependencies
	// that name none: the runtime provider's for a Camel version.
	BOM runtime.Coordinate
	// Dependencies are the runtime's and the integration's, in any order.
	Dependencies []runtime.Coordinate
	// Repositories are extra Maven repositories, looked up in order after
	// the settings' own, in Camel K's form (ParseRepository).
	Repositories []string
}

// NewProject is the project of a kit of provider p at a Camel version: its BOM, its modules,
// then deps, looked up in repos after the settings' own repositories.
func NewProject(p runtime.Provider, camelVersion string, deps []runtime.Coordinate, repos []string) Project {
	return Project{BOM: p.BOM(camelVersion), Dependencies: slices.Concat(p.Modules(), deps), Repositories: repos}
}

// POM writes the project's pom.xml: Camel's BOM imported, each dependency
// once, sorted, so that the same project always gives the same bytes.
func (p Project) POM() ([]byte, error) {
	if p.BOM.Version == "" {
		return nil, fmt.Errorf("the project names no Camel version")
	}
	doc := pom{
		XMLNS: "http://maven.apache.org/POM/4.0.0", ModelVersion: "4.0.0",
		GroupID: "dev.caravan.kit", ArtifactID: "kit", Version: "1", Packaging: "pom",
		Properties: pomProperties{Encoding: "UTF-8"},
	}
	doc.Management.Dependencies = []pomDependency{{GroupID: p.BOM.GroupID, ArtifactID: p.BOM.ArtifactID,
		Version: p.BOM.Version, Type: p.BOM.Type, Scope: "import"}}
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
