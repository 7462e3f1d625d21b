package release

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/types"
	. "github.com/onsi/gomega"

	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/operatorimage"
	"github.com/caravan-dev/caravan/internal/packaging"
)

var twoPlatforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}

// memoryRegistry starts a registry in memory for the test, and returns how to reach it.
func memoryRegistry(t *testing.T) image.Registry {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return image.Registry{Address: strings.TrimPrefix(srv.URL, "http://"), Insecure: true}
}

// layerFiles reads the files of an image's layer by path, and its directories with a trailing slash.
func layerFiles(t *testing.T, l v1.Layer) map[string][]byte {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name] = data
	}
}

// generated are the generated files of a release of version, replacing replaces.
func generated(t *testing.T, version, replaces string) map[string][]byte {
	t.Helper()
	files, err := packaging.Generated(packaging.Release{Version: version, Replaces: replaces,
		Image: "registry.example/caravan/operator@sha256:" + strings.Repeat("0a", 32)})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestTheBundleImageIsTheBundleDirectoryWithItsAnnotationsAsLabels(t *testing.T) {
	g := NewWithT(t)
	files := generated(t, "v0.2.0", "v0.1.0")
	idx, err := bundleIndex(files, twoPlatforms)
	g.Expect(err).NotTo(HaveOccurred())
	manifest, err := idx.IndexManifest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(manifest.Manifests).To(HaveLen(2))
	for i, desc := range manifest.Manifests {
		g.Expect(*desc.Platform).To(Equal(twoPlatforms[i]))
		img, err := idx.Image(desc.Digest)
		g.Expect(err).NotTo(HaveOccurred())
		cfg, err := img.ConfigFile()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cfg.OS + "/" + cfg.Architecture).To(Equal(twoPlatforms[i].String()))
		g.Expect(cfg.Config.Labels).To(Equal(map[string]string{
			"operators.operatorframework.io.bundle.mediatype.v1":       "registry+v1",
			"operators.operatorframework.io.bundle.manifests.v1":       "manifests/",
			"operators.operatorframework.io.bundle.metadata.v1":        "metadata/",
			"operators.operatorframework.io.bundle.package.v1":         "caravan",
			"operators.operatorframework.io.bundle.channels.v1":        "candidate-v0",
			"operators.operatorframework.io.bundle.channel.default.v1": "candidate-v0",
		}))
		layers, err := img.Layers()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(layers).To(HaveLen(1))
		want := map[string][]byte{"manifests/": {}, "metadata/": {}}
		for p, data := range files {
			if rel, ok := strings.CutPrefix(p, packaging.BundleDir+"/"); ok {
				want[rel] = data
			}
		}
		g.Expect(layerFiles(t, layers[0])).To(Equal(want))
		g.Expect(want).To(HaveKey("manifests/caravan.clusterserviceversion.yaml"))
		g.Expect(want).To(HaveKey("metadata/annotations.yaml"))
	}
	again, err := bundleIndex(files, twoPlatforms)
	g.Expect(err).NotTo(HaveOccurred())
	d1, _ := idx.Digest()
	d2, _ := again.Digest()
	g.Expect(d2).To(Equal(d1), "the same bundle gives the same digest")
}

func TestTheCatalogImageHoldsTheCatalogWhereOLMLooks(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	reg := memoryRegistry(t)
	catalog := []byte("---\nschema: olm.package\nname: caravan\n")

	t.Log("without a base, the image holds the catalog alone")
	idx, err := catalogIndex(ctx, Options{Registry: reg, ImagePlatforms: twoPlatforms}, catalog)
	g.Expect(err).NotTo(HaveOccurred())
	manifest, err := idx.IndexManifest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(manifest.Manifests).To(HaveLen(2))
	img, err := idx.Image(manifest.Manifests[1].Digest)
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := img.ConfigFile()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Architecture).To(Equal("arm64"))
	g.Expect(cfg.Config.Labels).To(HaveKeyWithValue("operators.operatorframework.io.index.configs.v1", "/configs"))
	g.Expect(cfg.Config.Entrypoint).To(BeEmpty())
	layers, err := img.Layers()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(layers).To(HaveLen(1))
	g.Expect(layerFiles(t, layers[0])).To(Equal(map[string][]byte{"configs/": {}, "configs/caravan/": {},
		"configs/caravan/catalog.yaml": catalog}))

	t.Log("on a base of each platform (opm's), the image runs opm serve on the catalog")
	base := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range twoPlatforms {
		layer, err := random.Layer(64, types.DockerLayer)
		g.Expect(err).NotTo(HaveOccurred())
		img, err := mutate.AppendLayers(empty.Image, layer)
		g.Expect(err).NotTo(HaveOccurred())
		cfg, err := img.ConfigFile()
		g.Expect(err).NotTo(HaveOccurred())
		cfg = cfg.DeepCopy()
		cfg.OS, cfg.Architecture = p.OS, p.Architecture
		cfg.Config.Labels = map[string]string{"from": "opm"}
		img, err = mutate.ConfigFile(img, cfg)
		g.Expect(err).NotTo(HaveOccurred())
		base = mutate.AppendManifests(base, mutate.IndexAddendum{Add: img,
			Descriptor: v1.Descriptor{MediaType: types.DockerManifestSchema2, Platform: &p}})
	}
	opm := reg.Address + "/operator-framework/opm:v1"
	g.Expect(image.PushIndex(ctx, reg, opm, base)).To(Succeed())
	idx, err = catalogIndex(ctx, Options{Registry: reg, ImagePlatforms: twoPlatforms, CatalogBase: opm}, catalog)
	g.Expect(err).NotTo(HaveOccurred())
	manifest, err = idx.IndexManifest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(manifest.MediaType).To(Equal(types.DockerManifestList), "the base's format")
	for i, desc := range manifest.Manifests {
		img, err := idx.Image(desc.Digest)
		g.Expect(err).NotTo(HaveOccurred())
		cfg, err := img.ConfigFile()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cfg.OS + "/" + cfg.Architecture).To(Equal(twoPlatforms[i].String()))
		g.Expect(cfg.Config.Labels).To(Equal(map[string]string{"from": "opm", "operators.operatorframework.io.index.configs.v1": "/configs"}))
		g.Expect(cfg.Config.Entrypoint).To(Equal([]string{"/bin/opm"}))
		g.Expect(cfg.Config.Cmd).To(Equal([]string{"serve", "/configs", "--cache-dir=/tmp/cache", "--cache-enforce-integrity=false"}))
		layers, err := img.Layers()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(layers).To(HaveLen(2), "the base's layer and the catalog's")
		data, ok, err := image.ReadFile(img, "/configs/caravan/catalog.yaml")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ok).To(BeTrue())
		g.Expect(data).To(Equal(catalog))
	}

	t.Log("a base without an image of a platform is refused")
	_, err = catalogIndex(ctx, Options{Registry: reg, CatalogBase: opm,
		ImagePlatforms: []v1.Platform{{OS: "linux", Architecture: "s390x"}}}, catalog)
	g.Expect(err).To(MatchError(ContainSubstring("the base of the OLM catalog image")))
}

func TestEachReleaseAddsItsBundleToThePreviousReleasesCatalog(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	reg := memoryRegistry(t)
	o := Options{Registry: reg, Prefix: "team", ImagePlatforms: twoPlatforms, Progress: io.Discard}
	publish := func(version string) (olmResult, string) {
		t.Helper()
		catalog, err := previousCatalog(ctx, o)
		g.Expect(err).NotTo(HaveOccurred())
		replaces, err := replacedRelease(catalog, semver.MustParse(strings.TrimPrefix(version, "v")))
		g.Expect(err).NotTo(HaveOccurred())
		o := o
		o.Version, o.OutDir = version, t.TempDir()
		res, err := publishOLM(ctx, o, generated(t, version, replaces), catalog)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Files).To(Equal([]string{"deploy/olm/catalog/caravan/catalog.yaml"}))
		written, err := os.ReadFile(filepath.Join(o.OutDir, res.Files[0]))
		g.Expect(err).NotTo(HaveOccurred())
		return res, string(written)
	}

	first, _ := publish("v0.1.0")
	g.Expect(first.Bundle).To(HavePrefix(reg.Address + "/team/caravan/operator-bundle@sha256:"))
	g.Expect(first.Catalog).To(HavePrefix(reg.Address + "/team/caravan/operator-catalog@sha256:"))
	second, written := publish("v0.2.0-rc.1")

	t.Log("the newest catalog, by tag, holds both releases, the second replacing the first")
	catalog, err := previousCatalog(ctx, o)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(catalog.Entries()).To(Equal([]packaging.ChannelEntry{
		{Name: "caravan.v0.1.0", SkipRange: ">=0.0.0 <0.1.0"},
		{Name: "caravan.v0.2.0-rc.1", Replaces: "caravan.v0.1.0", SkipRange: ">=0.0.0 <0.2.0-rc.1"},
	}))
	data, err := catalog.YAML()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(data)).To(Equal(written), "the release's catalog file is its image's")
	for _, bundle := range []string{first.Bundle, second.Bundle} {
		g.Expect(written).To(ContainSubstring("image: " + bundle + "\n"))
		_, err := image.PullPlatform(ctx, reg, bundle, twoPlatforms[1])
		g.Expect(err).NotTo(HaveOccurred(), "the catalog's bundle %s is in the registry", bundle)
	}
	for _, ref := range []string{second.Catalog, reg.Address + "/team/caravan/operator-catalog:v0.2.0-rc.1"} {
		img, err := image.PullPlatform(ctx, reg, ref, twoPlatforms[0])
		g.Expect(err).NotTo(HaveOccurred())
		got, ok, err := image.ReadFile(img, "/configs/caravan/catalog.yaml")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ok).To(BeTrue())
		g.Expect(string(got)).To(Equal(written))
	}

	t.Log("a release of a version the catalog holds, or an earlier one, is refused")
	for _, v := range []string{"0.2.0-rc.1", "0.1.5"} {
		_, err := replacedRelease(catalog, semver.MustParse(v))
		g.Expect(err).To(MatchError(ContainSubstring("already holds caravan.v0.2.0-rc.1")))
	}
	dir := t.TempDir()
	changelog, out := filepath.Join(dir, "CHANGELOG.md"), filepath.Join(dir, "dist")
	g.Expect(os.WriteFile(changelog, []byte(testChangelog), 0o644)).To(Succeed())
	_, err = Run(ctx, Options{Version: "v0.1.5", Registry: reg, Prefix: "team", ImagePlatforms: twoPlatforms,
		Source: operatorimage.Source{Dir: dir, Revision: "abc"}, OutDir: out, Changelog: changelog, Progress: io.Discard, Unsigned: true})
	g.Expect(err).To(MatchError(ContainSubstring("already holds caravan.v0.2.0-rc.1")), "the whole release is refused")
	g.Expect(out).NotTo(BeADirectory(), "before it builds anything")
}
