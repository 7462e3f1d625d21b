package packaging

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"
)

// blobs decodes the documents of a file-based catalog.
func blobs(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, doc := range strings.Split(string(data), "---\n") {
		var blob map[string]any
		if err := yaml.Unmarshal([]byte(doc), &blob); err != nil {
			t.Fatalf("decoding %q: %v", doc, err)
		}
		if blob != nil {
			out = append(out, blob)
		}
	}
	return out
}

// release adds the bundle of version, replacing replaces, to the catalog data, and returns the new catalog.
func release(t *testing.T, data []byte, version, replaces, image string) []byte {
	t.Helper()
	c, err := ParseCatalog(data)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generated(Release{Version: version, Replaces: replaces})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Add(files, image); err != nil {
		t.Fatal(err)
	}
	out, err := c.YAML()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTheCatalogGrowsByOneReleaseAtATime(t *testing.T) {
	g := NewWithT(t)
	first := release(t, nil, "v0.1.0", "", "registry.example/caravan/operator-bundle@sha256:aaa")
	second := release(t, first, "v0.2.0-rc.1", "v0.1.0", "registry.example/caravan/operator-bundle@sha256:bbb")

	c, err := ParseCatalog(second)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Entries()).To(Equal([]ChannelEntry{
		{Name: "caravan.v0.1.0", SkipRange: ">=0.0.0 <0.1.0"},
		{Name: "caravan.v0.2.0-rc.1", Replaces: "caravan.v0.1.0", SkipRange: ">=0.0.0 <0.2.0-rc.1"},
	}))
	head, v, ok, err := c.Head()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ok).To(BeTrue())
	g.Expect(head.Name).To(Equal("caravan.v0.2.0-rc.1"))
	g.Expect(v.String()).To(Equal("0.2.0-rc.1"))

	docs := blobs(t, second)
	g.Expect(docs).To(HaveLen(4), "a package, a channel and two bundles")
	g.Expect(docs[0]).To(And(HaveKeyWithValue("schema", "olm.package"), HaveKeyWithValue("name", "caravan"),
		HaveKeyWithValue("defaultChannel", "candidate-v0"), HaveKey("icon"), HaveKey("description")))
	g.Expect(docs[1]).To(And(HaveKeyWithValue("schema", "olm.channel"), HaveKeyWithValue("package", "caravan"),
		HaveKeyWithValue("name", "candidate-v0")))
	for i, want := range []struct{ name, image, version string }{
		{"caravan.v0.1.0", "registry.example/caravan/operator-bundle@sha256:aaa", "0.1.0"},
		{"caravan.v0.2.0-rc.1", "registry.example/caravan/operator-bundle@sha256:bbb", "0.2.0-rc.1"},
	} {
		b := docs[2+i]
		g.Expect(b).To(And(HaveKeyWithValue("schema", "olm.bundle"), HaveKeyWithValue("name", want.name),
			HaveKeyWithValue("package", "caravan"), HaveKeyWithValue("image", want.image)))
		props := map[string][]any{}
		for _, p := range b["properties"].([]any) {
			p := p.(map[string]any)
			props[p["type"].(string)] = append(props[p["type"].(string)], p["value"])
		}
		g.Expect(props["olm.package"]).To(ConsistOf(map[string]any{"packageName": "caravan", "version": want.version}))
		g.Expect(props["olm.gvk"]).To(ContainElement(map[string]any{"group": "camel.apache.org", "kind": "Integration", "version": "v1"}))
		g.Expect(props["olm.gvk"]).To(ContainElement(map[string]any{"group": "camel.apache.org", "kind": "KameletBinding", "version": "v1alpha1"}))
		g.Expect(props["olm.csv.metadata"]).To(ConsistOf(And(HaveKeyWithValue("displayName", "Caravan"), HaveKey("installModes"))))
		g.Expect(b["relatedImages"]).To(ContainElement(map[string]any{"name": "", "image": want.image}))
	}
}

func TestTheCatalogRefusesABundleThatWouldBreakItsGraph(t *testing.T) {
	first := release(t, nil, "v0.2.0", "", "registry.example/caravan/operator-bundle@sha256:aaa")
	for _, tc := range []struct{ name, version, replaces, want string }{
		{"a bundle that replaces none, a second head", "v0.3.0", "", `replaces "", but the channel's newest bundle is caravan.v0.2.0`},
		{"a bundle that replaces an older one", "v0.3.0", "v0.1.0", "the channel's newest bundle is caravan.v0.2.0"},
		{"a bundle of the newest version", "v0.2.0", "", "must be of a later version"},
		{"a bundle of an earlier version", "v0.1.5", "", "must be of a later version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseCatalog(first)
			if err != nil {
				t.Fatal(err)
			}
			files, err := Generated(Release{Version: tc.version, Replaces: tc.replaces})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Add(files, "registry.example/b@sha256:bbb"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Add = %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

func TestACatalogIsValidatedAsOpmValidatesOne(t *testing.T) {
	const pkg = "---\nschema: olm.package\nname: caravan\ndefaultChannel: candidate-v0\n"
	bundle := func(v string) string {
		return "---\nschema: olm.bundle\npackage: caravan\nname: caravan.v" + v + "\nimage: registry.example/b:" + v +
			"\nproperties: [{type: olm.package, value: {packageName: caravan, version: " + v + "}}]\n"
	}
	channel := func(entries string) string {
		return "---\nschema: olm.channel\npackage: caravan\nname: candidate-v0\nentries: " + entries + "\n"
	}
	three := bundle("0.1.0") + bundle("0.2.0") + bundle("0.3.0")
	for _, tc := range []struct{ name, catalog, want string }{
		{"a chain of replaces", pkg + channel(`[{name: caravan.v0.1.0}, {name: caravan.v0.2.0, replaces: caravan.v0.1.0},
			{name: caravan.v0.3.0, replaces: caravan.v0.2.0}]`) + three, ""},
		{"the oldest replaces a bundle the catalog lacks", pkg + channel(`[{name: caravan.v0.2.0, replaces: caravan.v0.1.0}]`) + bundle("0.2.0"), ""},
		{"a skipped bundle off the chain", pkg + channel(`[{name: caravan.v0.1.0}, {name: caravan.v0.2.0, replaces: caravan.v0.1.0},
			{name: caravan.v0.3.0, replaces: caravan.v0.1.0, skips: [caravan.v0.2.0]}]`) + three, ""},
		{"two heads", pkg + channel(`[{name: caravan.v0.1.0}, {name: caravan.v0.2.0, replaces: caravan.v0.1.0},
			{name: caravan.v0.3.0, replaces: caravan.v0.1.0}]`) + three, "2 heads"},
		{"stranded bundles", pkg + channel(`[{name: caravan.v0.1.0, replaces: caravan.v0.2.0}, {name: caravan.v0.2.0, replaces: caravan.v0.1.0},
			{name: caravan.v0.3.0, replaces: caravan.v0.0.1, skipRange: "<0.3.0"}]`) + three, "strands"},
		{"a cycle", pkg + channel(`[{name: caravan.v0.1.0, replaces: caravan.v0.3.0}, {name: caravan.v0.2.0, replaces: caravan.v0.1.0},
			{name: caravan.v0.3.0, replaces: caravan.v0.2.0}, {name: caravan.v0.4.0, replaces: caravan.v0.3.0}]`) + three + bundle("0.4.0"),
			"cycle"},
		{"an entry without its bundle", pkg + channel(`[{name: caravan.v0.1.0}]`), "no bundle of that name"},
		{"a bundle in no entry", pkg + channel(`[{name: caravan.v0.1.0}]`) + bundle("0.1.0") + bundle("0.2.0"), "in no entry"},
		{"another package", pkg + "---\nschema: olm.package\nname: other\ndefaultChannel: stable\n", "holds package caravan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCatalog([]byte(tc.catalog))
			if tc.want == "" && err != nil {
				t.Errorf("ParseCatalog = %v, want no error", err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("ParseCatalog = %v, want an error saying %q", err, tc.want)
			}
		})
	}
}
