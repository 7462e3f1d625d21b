package packaging

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// CatalogDir is where a release writes the OLM catalog, the file-based catalog of package caravan.
const CatalogDir = "deploy/olm/catalog"

// CatalogFile is the catalog's one file, under CatalogDir as under a catalog image's configs
// directory.
const CatalogFile = OLMPackage + "/catalog.yaml"

// The schemas of a file-based catalog's blobs (operator-framework's declarative config).
const (
	schemaPackage = "olm.package"
	schemaChannel = "olm.channel"
	schemaBundle  = "olm.bundle"
)

// ChannelEntry is a bundle of the channel and the upgrade edges into it.
type ChannelEntry struct {
	Name      string   `json:"name"`
	Replaces  string   `json:"replaces,omitempty"`
	Skips     []string `json:"skips,omitempty"`
	SkipRange string   `json:"skipRange,omitempty"`
}

type catalogPackage struct {
	Schema         string       `json:"schema"`
	Name           string       `json:"name"`
	DefaultChannel string       `json:"defaultChannel"`
	Icon           *catalogIcon `json:"icon,omitempty"`
	Description    string       `json:"description,omitempty"`
}

type catalogIcon struct {
	Data      []byte `json:"base64data"`
	MediaType string `json:"mediatype"`
}

type catalogChannel struct {
	Schema  string         `json:"schema"`
	Name    string         `json:"name"`
	Package string         `json:"package"`
	Entries []ChannelEntry `json:"entries"`
}

type catalogBundle struct {
	Schema        string            `json:"schema"`
	Name          string            `json:"name"`
	Package       string            `json:"package"`
	Image         string            `json:"image"`
	Properties    []catalogProperty `json:"properties,omitempty"`
	RelatedImages []relatedImage    `json:"relatedImages,omitempty"`
}

type catalogProperty struct {
	Type  string `json:"type"`
	Value any    `json:"value"`
}

type relatedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// csvMetadata is the olm.csv.metadata property of a bundle: what a console shows of its CSV.
type csvMetadata struct {
	Annotations    map[string]string                           `json:"annotations,omitempty"`
	CRDs           operatorsv1alpha1.CustomResourceDefinitions `json:"crdDescriptions,omitempty"`
	Description    string                                      `json:"description,omitempty"`
	DisplayName    string                                      `json:"displayName,omitempty"`
	InstallModes   []operatorsv1alpha1.InstallMode             `json:"installModes,omitempty"`
	Keywords       []string                                    `json:"keywords,omitempty"`
	Labels         map[string]string                           `json:"labels,omitempty"`
	Links          []operatorsv1alpha1.AppLink                 `json:"links,omitempty"`
	Maintainers    []operatorsv1alpha1.Maintainer              `json:"maintainers,omitempty"`
	Maturity       string                                      `json:"maturity,omitempty"`
	MinKubeVersion string                                      `json:"minKubeVersion,omitempty"`
	Provider       operatorsv1alpha1.AppLink                   `json:"provider,omitempty"`
}

// Catalog is the file-based catalog of package caravan: its one channel, every release's bundle,
// and the blobs of other schemas (such as olm.deprecations) as they were.
type Catalog struct {
	pkg     *catalogPackage
	channel catalogChannel
	bundles map[string]json.RawMessage // the olm.bundle blobs by name
	others  []json.RawMessage
}

// ParseCatalog reads a catalog that Catalog.YAML wrote; empty data is an empty catalog.
func ParseCatalog(data []byte) (*Catalog, error) {
	c := &Catalog{channel: catalogChannel{Schema: schemaChannel, Name: OLMChannel, Package: OLMPackage},
		bundles: map[string]json.RawMessage{}}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var blob json.RawMessage
		if err := dec.Decode(&blob); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("reading the catalog: %w", err)
		}
		if len(blob) == 0 || string(blob) == "null" {
			continue
		}
		if err := c.addBlob(blob); err != nil {
			return nil, err
		}
	}
	return c, c.Validate()
}

// addBlob sorts one blob of a catalog being read into c.
func (c *Catalog) addBlob(blob json.RawMessage) error {
	var meta struct{ Schema, Name, Package string }
	if err := json.Unmarshal(blob, &meta); err != nil {
		return fmt.Errorf("reading the catalog: %w", err)
	}
	switch {
	case meta.Schema == schemaPackage && meta.Name == OLMPackage:
		c.pkg = &catalogPackage{}
		return json.Unmarshal(blob, c.pkg)
	case meta.Schema == schemaChannel && meta.Package == OLMPackage && meta.Name == OLMChannel:
		return json.Unmarshal(blob, &c.channel)
	case meta.Schema == schemaBundle && meta.Package == OLMPackage:
		c.bundles[meta.Name] = blob
		return nil
	case meta.Schema == schemaPackage || meta.Schema == schemaChannel || meta.Schema == schemaBundle:
		return fmt.Errorf("the catalog holds %s %s of package %q: it holds package %s and channel %s alone",
			meta.Schema, meta.Name, meta.Package, OLMPackage, OLMChannel)
	}
	c.others = append(c.others, blob)
	return nil
}

// Head is the channel's newest entry, which no other replaces or skips, and its version; ok is
// false for an empty catalog.
func (c *Catalog) Head() (entry ChannelEntry, v semver.Version, ok bool, err error) {
	if len(c.channel.Entries) == 0 {
		return ChannelEntry{}, semver.Version{}, false, nil
	}
	incoming := map[string]bool{}
	for _, e := range c.channel.Entries {
		incoming[e.Replaces] = true
		for _, s := range e.Skips {
			incoming[s] = true
		}
	}
	var heads []ChannelEntry
	for _, e := range c.channel.Entries {
		if !incoming[e.Name] {
			heads = append(heads, e)
		}
	}
	if len(heads) != 1 {
		names := make([]string, len(heads))
		for i, h := range heads {
			names[i] = h.Name
		}
		return ChannelEntry{}, semver.Version{}, false, fmt.Errorf("channel %s has %d heads (%s), want one", OLMChannel, len(heads), strings.Join(names, ", "))
	}
	v, err = csvVersion(heads[0].Name)
	return heads[0], v, err == nil, err
}

// Validate checks the upgrade graph as opm validate does: one head, a replaces chain from it
// through every entry no other skips and without cycles, one bundle of a distinct version for
// each entry. The oldest entry may replace one the catalog lacks.
func (c *Catalog) Validate() error {
	head, _, ok, err := c.Head()
	if err != nil || !ok {
		if err == nil && len(c.bundles) > 0 {
			err = fmt.Errorf("the catalog has bundles but channel %s has no entry", OLMChannel)
		}
		return err
	}
	entries, skipped, versions := map[string]ChannelEntry{}, map[string]bool{}, map[string]string{}
	for _, e := range c.channel.Entries {
		if _, dup := entries[e.Name]; dup {
			return fmt.Errorf("channel %s has entry %s twice", OLMChannel, e.Name)
		}
		entries[e.Name] = e
		for _, s := range e.Skips {
			skipped[s] = true
		}
		if _, ok := c.bundles[e.Name]; !ok {
			return fmt.Errorf("channel %s has entry %s, and the catalog no bundle of that name", OLMChannel, e.Name)
		}
		v, err := csvVersion(e.Name)
		if err != nil {
			return err
		}
		if other, dup := versions[v.String()]; dup {
			return fmt.Errorf("bundles %s and %s have the same version %s", other, e.Name, v)
		}
		versions[v.String()] = e.Name
	}
	for name := range c.bundles {
		if _, ok := entries[name]; !ok {
			return fmt.Errorf("bundle %s is in no entry of channel %s", name, OLMChannel)
		}
	}
	chain := map[string]bool{head.Name: true}
	for cur, ok := head, true; ok && cur.Replaces != "" && !skipped[cur.Replaces]; cur, ok = entries[cur.Replaces] {
		if chain[cur.Replaces] {
			return fmt.Errorf("channel %s: %s replaces %s, which is a cycle", OLMChannel, cur.Name, cur.Replaces)
		}
		chain[cur.Replaces] = true
	}
	for name := range entries {
		if !chain[name] && !skipped[name] {
			return fmt.Errorf("channel %s: no upgrade from the head %s's replaces chain reaches %s, which it strands", OLMChannel, head.Name, name)
		}
	}
	return nil
}

// Add adds the bundle of files (as Generated wrote it) to the channel, its image bundleImage. The
// bundle must replace the channel's head, and be of a later version; the package takes the
// bundle's description and icon.
func (c *Catalog) Add(files map[string][]byte, bundleImage string) error {
	csv, crds, err := bundleManifests(files)
	if err != nil {
		return err
	}
	head, headVersion, ok, err := c.Head()
	if err != nil {
		return err
	}
	v := csv.Spec.Version.Version
	switch {
	case ok && !headVersion.LT(v):
		return fmt.Errorf("the catalog's newest bundle is %s: %s must be of a later version", head.Name, csv.Name)
	case ok && csv.Spec.Replaces != head.Name:
		return fmt.Errorf("bundle %s replaces %q, but the channel's newest bundle is %s: release it replacing %s",
			csv.Name, csv.Spec.Replaces, head.Name, head.Name)
	}
	blob, err := json.Marshal(bundleBlob(csv, crds, bundleImage))
	if err != nil {
		return err
	}
	c.bundles[csv.Name] = blob
	c.channel.Entries = append(c.channel.Entries, ChannelEntry{Name: csv.Name, Replaces: csv.Spec.Replaces,
		SkipRange: csv.Annotations[SkipRangeAnnotation]})
	c.pkg = &catalogPackage{Schema: schemaPackage, Name: OLMPackage, DefaultChannel: OLMChannel, Description: csv.Spec.Description}
	if len(csv.Spec.Icon) > 0 {
		data, err := base64.StdEncoding.DecodeString(csv.Spec.Icon[0].Data)
		if err != nil {
			return fmt.Errorf("the icon of %s: %w", csv.Name, err)
		}
		c.pkg.Icon = &catalogIcon{Data: data, MediaType: csv.Spec.Icon[0].MediaType}
	}
	return c.Validate()
}

// YAML writes the catalog as declarative config: the package, the channel, the bundles from the
// oldest, then the other blobs.
func (c *Catalog) YAML() ([]byte, error) {
	if c.pkg == nil {
		return nil, errors.New("the catalog has no bundle")
	}
	blobs := []any{c.pkg, c.channel}
	for _, e := range c.channel.Entries {
		blobs = append(blobs, c.bundles[e.Name])
	}
	for _, o := range c.others {
		blobs = append(blobs, o)
	}
	var b bytes.Buffer
	for _, blob := range blobs {
		data, err := yaml.Marshal(blob)
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	return b.Bytes(), nil
}

// Entries are the channel's entries, oldest first.
func (c *Catalog) Entries() []ChannelEntry { return slices.Clone(c.channel.Entries) }

// bundleManifests reads the ClusterServiceVersion and the CRDs of the bundle in files.
func bundleManifests(files map[string][]byte) (*operatorsv1alpha1.ClusterServiceVersion, []*apiextensionsv1.CustomResourceDefinition, error) {
	var csv *operatorsv1alpha1.ClusterServiceVersion
	var crds []*apiextensionsv1.CustomResourceDefinition
	dir := path.Join(BundleDir, "manifests") + "/"
	names := make([]string, 0, len(files))
	for p := range files {
		if strings.HasPrefix(p, dir) {
			names = append(names, p)
		}
	}
	slices.Sort(names)
	for _, p := range names {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(files[p], &meta); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		switch meta.Kind {
		case operatorsv1alpha1.ClusterServiceVersionKind:
			csv = &operatorsv1alpha1.ClusterServiceVersion{}
			if err := yaml.Unmarshal(files[p], csv); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", p, err)
			}
		case "CustomResourceDefinition":
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.Unmarshal(files[p], crd); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", p, err)
			}
			crds = append(crds, crd)
		}
	}
	if csv == nil {
		return nil, nil, fmt.Errorf("no ClusterServiceVersion under %s", dir)
	}
	return csv, crds, nil
}

// bundleBlob is the olm.bundle blob of a bundle, as opm render writes one: its package and
// version, the APIs it provides, its CSV's metadata, and its images.
func bundleBlob(csv *operatorsv1alpha1.ClusterServiceVersion, crds []*apiextensionsv1.CustomResourceDefinition, image string) catalogBundle {
	b := catalogBundle{Schema: schemaBundle, Name: csv.Name, Package: OLMPackage, Image: image}
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if v.Served {
				b.Properties = append(b.Properties, catalogProperty{Type: "olm.gvk",
					Value: map[string]string{"group": crd.Spec.Group, "kind": crd.Spec.Names.Kind, "version": v.Name}})
			}
		}
	}
	b.Properties = append(b.Properties,
		catalogProperty{Type: "olm.package", Value: map[string]string{"packageName": OLMPackage, "version": csv.Spec.Version.String()}},
		catalogProperty{Type: "olm.csv.metadata", Value: csvMetadata{Annotations: csv.Annotations, CRDs: csv.Spec.CustomResourceDefinitions,
			Description: csv.Spec.Description, DisplayName: csv.Spec.DisplayName, InstallModes: csv.Spec.InstallModes,
			Keywords: csv.Spec.Keywords, Labels: csv.Labels, Links: csv.Spec.Links, Maintainers: csv.Spec.Maintainers,
			Maturity: csv.Spec.Maturity, MinKubeVersion: csv.Spec.MinKubeVersion, Provider: csv.Spec.Provider}})
	b.RelatedImages = append(b.RelatedImages, relatedImage{Image: image})
	for _, r := range csv.Spec.RelatedImages {
		b.RelatedImages = append(b.RelatedImages, relatedImage{Name: r.Name, Image: r.Image})
	}
	return b
}

// csvVersion is the version in the name of a bundle of the package: caravan.v1.2.3 gives 1.2.3.
func csvVersion(name string) (semver.Version, error) {
	rest, ok := strings.CutPrefix(name, OLMPackage+".v")
	if !ok {
		return semver.Version{}, fmt.Errorf("bundle %s: its name is not %s.v<version>", name, OLMPackage)
	}
	v, err := semver.Parse(rest)
	if err != nil {
		return semver.Version{}, fmt.Errorf("bundle %s: %w", name, err)
	}
	return v, nil
}
