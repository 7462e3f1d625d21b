package release

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/blang/semver/v4"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/operatorimage"
	"github.com/caravan-dev/caravan/internal/packaging"
)

// BundleRepository is where the OLM bundle image goes under the release's registry and prefix,
// tagged with the version.
const BundleRepository = "caravan/operator-bundle"

// CatalogRepository is where the OLM catalog image goes under the release's registry and prefix,
// tagged with the version and with CatalogTag.
const CatalogRepository = "caravan/operator-catalog"

// CatalogTag tags the newest release's catalog, which holds every release: a CatalogSource polls
// it for upgrades, and the next release adds its bundle to it.
const CatalogTag = "latest"

// OPMImage is the image hack/release builds the catalog on: operator-framework's opm, which
// serves the catalog to OLM.
const OPMImage = "quay.io/operator-framework/opm:v1.59.0"

// CatalogConfigsLabel names, on a catalog image, the directory of its file-based catalog.
const CatalogConfigsLabel = "operators.operatorframework.io.index.configs.v1"

// catalogConfigs is that directory.
const catalogConfigs = "/configs"

// opmServe is the command of a catalog image built on opm. It builds opm's cache as it starts,
// which a build without a container runtime cannot do beforehand.
var opmServe = []string{"serve", catalogConfigs, "--cache-dir=/tmp/cache", "--cache-enforce-integrity=false"}

// epoch dates the files and the config of the bundle and catalog images: the same content gives
// the same digest.
var epoch = time.Unix(0, 0).UTC()

// olmResult is what publishOLM pushed and wrote.
type olmResult struct {
	Bundle, Catalog string   // the images by digest
	Files           []string // written under OutDir
}

// previousCatalog reads the catalog at CatalogTag in the release's registry, which the previous
// release pushed; an empty catalog when there is none.
func previousCatalog(ctx context.Context, o Options) (*packaging.Catalog, error) {
	ref := path.Join(o.Registry.Address, o.Prefix, CatalogRepository) + ":" + CatalogTag
	img, err := image.PullPlatform(ctx, o.Registry, ref, o.imagePlatforms()[0])
	if image.ReasonOf(err) == image.ReasonImageNotFound {
		return packaging.ParseCatalog(nil)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the OLM catalog of the previous release: %w", err)
	}
	file := path.Join(catalogConfigs, packaging.CatalogFile)
	data, ok, err := image.ReadFile(img, file)
	if err != nil {
		return nil, fmt.Errorf("reading the OLM catalog of the previous release, %s: %w", ref, err)
	}
	if !ok {
		return nil, fmt.Errorf("the OLM catalog of the previous release, %s, holds no %s", ref, file)
	}
	c, err := packaging.ParseCatalog(data)
	if err != nil {
		return nil, fmt.Errorf("the OLM catalog of the previous release, %s: %w", ref, err)
	}
	return c, nil
}

// replacedRelease is the release that the bundle of version v replaces: the newest of catalog, as
// v1.2.3, or "" for an empty catalog. It refuses a version that is not later.
func replacedRelease(catalog *packaging.Catalog, v semver.Version) (string, error) {
	head, headVersion, ok, err := catalog.Head()
	if err != nil || !ok {
		return "", err
	}
	if !headVersion.LT(v) {
		return "", fmt.Errorf("the OLM catalog already holds %s: release a version later than v%s", head.Name, headVersion)
	}
	return "v" + headVersion.String(), nil
}

// publishOLM pushes the OLM bundle of files (as packaging.Generated wrote them) as an image, adds
// it to catalog, and pushes the catalog as an image and writes it under OutDir.
func publishOLM(ctx context.Context, o Options, files map[string][]byte, catalog *packaging.Catalog) (olmResult, error) {
	var res olmResult
	bundle, err := bundleIndex(files, o.imagePlatforms())
	if err != nil {
		return res, err
	}
	if res.Bundle, err = pushIndex(ctx, o, BundleRepository, bundle, o.Version); err != nil {
		return res, fmt.Errorf("the OLM bundle image: %w", err)
	}
	if err := catalog.Add(files, res.Bundle); err != nil {
		return res, fmt.Errorf("the OLM catalog: %w", err)
	}
	data, err := catalog.YAML()
	if err != nil {
		return res, err
	}
	file := path.Join(packaging.CatalogDir, packaging.CatalogFile)
	dst := filepath.Join(o.OutDir, filepath.FromSlash(file))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return res, err
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		return res, err
	}
	res.Files = append(res.Files, file)
	idx, err := catalogIndex(ctx, o, data)
	if err != nil {
		return res, err
	}
	if res.Catalog, err = pushIndex(ctx, o, CatalogRepository, idx, o.Version, CatalogTag); err != nil {
		return res, fmt.Errorf("the OLM catalog image: %w", err)
	}
	return res, nil
}

// bundleIndex is the OLM bundle of files as an image for each platform: its manifests and metadata
// at /manifests and /metadata, labelled with the bundle's annotations, as OLM's bundle format asks.
func bundleIndex(files map[string][]byte, platforms []v1.Platform) (v1.ImageIndex, error) {
	content := map[string][]byte{}
	for p, data := range files {
		if rel, ok := strings.CutPrefix(p, packaging.BundleDir+"/"); ok {
			content[rel] = data
		}
	}
	if len(content) == 0 {
		return nil, fmt.Errorf("no OLM bundle under %s", packaging.BundleDir)
	}
	images := make([]v1.Image, len(platforms))
	for i, p := range platforms {
		img, err := withFiles(nil, p, content, packaging.BundleAnnotations(), "caravan release: the OLM bundle")
		if err != nil {
			return nil, fmt.Errorf("the OLM bundle image: %w", err)
		}
		images[i] = img
	}
	return index(images, platforms)
}

// catalogIndex is the file-based catalog data as an image for each platform, at
// /configs/caravan/catalog.yaml and labelled so. Built on o.CatalogBase (opm), it serves the
// catalog to OLM; without one, it holds the catalog alone.
func catalogIndex(ctx context.Context, o Options, data []byte) (v1.ImageIndex, error) {
	content := map[string][]byte{path.Join(strings.TrimPrefix(catalogConfigs, "/"), packaging.CatalogFile): data}
	labels := map[string]string{CatalogConfigsLabel: catalogConfigs}
	platforms := o.imagePlatforms()
	images := make([]v1.Image, len(platforms))
	for i, p := range platforms {
		var base v1.Image
		if o.CatalogBase != "" {
			var err error
			if base, err = image.PullPlatform(ctx, o.Registry, o.CatalogBase, p); err != nil {
				return nil, fmt.Errorf("the base of the OLM catalog image: %w", err)
			}
		}
		img, err := withFiles(base, p, content, labels, "caravan release: the OLM catalog")
		if err != nil {
			return nil, fmt.Errorf("the OLM catalog image for %s: %w", p.String(), err)
		}
		if base != nil {
			if img, err = withCommand(img, []string{"/bin/opm"}, opmServe); err != nil {
				return nil, err
			}
		}
		images[i] = img
	}
	return index(images, platforms)
}

// withFiles is base (scratch when nil) for platform p with a layer of content, by path from the
// root, and labels added to its config.
func withFiles(base v1.Image, p v1.Platform, content map[string][]byte, labels map[string]string, createdBy string) (v1.Image, error) {
	if base == nil {
		base = mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	}
	mt, err := base.MediaType()
	if err != nil {
		return nil, err
	}
	layerType := types.DockerLayer
	if mt == types.OCIManifestSchema1 {
		layerType = types.OCILayer
	}
	layer, err := filesLayer(content)
	if err != nil {
		return nil, err
	}
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, MediaType: layerType, History: v1.History{CreatedBy: createdBy, Created: v1.Time{Time: epoch}}})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	switch {
	case cfg.OS == "" && cfg.Architecture == "":
		cfg.OS, cfg.Architecture, cfg.Variant = p.OS, p.Architecture, p.Variant
	case cfg.OS != p.OS || cfg.Architecture != p.Architecture:
		return nil, fmt.Errorf("the base image is for %s/%s, not %s", cfg.OS, cfg.Architecture, p.String())
	}
	cfg.Created = v1.Time{Time: epoch}
	if cfg.Config.Labels == nil {
		cfg.Config.Labels = map[string]string{}
	}
	maps.Copy(cfg.Config.Labels, labels)
	return mutate.ConfigFile(img, cfg)
}

// withCommand is img running entrypoint with cmd.
func withCommand(img v1.Image, entrypoint, cmd []string) (v1.Image, error) {
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	c := cfg.Config.DeepCopy()
	c.Entrypoint, c.Cmd = entrypoint, cmd
	return mutate.Config(img, *c)
}

// filesLayer is a deterministic gzip-compressed tar of content, by path from the root, with the
// directories that hold them.
func filesLayer(content map[string][]byte) (v1.Layer, error) {
	entries := map[string]bool{} // path, and whether it is a directory
	for p := range content {
		entries[p] = false
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			entries[d+"/"] = true
		}
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		hdr := &tar.Header{Name: name, Mode: 0o644, ModTime: epoch, Format: tar.FormatPAX, Typeflag: tar.TypeReg,
			Size: int64(len(content[name]))}
		if entries[name] {
			hdr.Mode, hdr.Typeflag, hdr.Size = 0o755, tar.TypeDir, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(content[name]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
}

// index is an index of images, the one of each platform: an OCI index, or a Docker manifest list
// for Docker images (built on a base of that format).
func index(images []v1.Image, platforms []v1.Platform) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for i, img := range images {
		mt, err := img.MediaType()
		if err != nil {
			return nil, err
		}
		if mt == types.DockerManifestSchema2 {
			idx = mutate.IndexMediaType(idx, types.DockerManifestList)
		}
		p := platforms[i]
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{MediaType: mt, Platform: &p}})
	}
	return idx, nil
}

// pushIndex pushes idx to repository under the release's registry and prefix, with each tag, and
// returns it by digest.
func pushIndex(ctx context.Context, o Options, repository string, idx v1.ImageIndex, tags ...string) (string, error) {
	repo := path.Join(o.Registry.Address, o.Prefix, repository)
	for _, tag := range tags {
		fmt.Fprintf(o.progress(), "pushing %s:%s\n", repo, tag)
		if err := image.PushIndex(ctx, o.Registry, repo+":"+tag, idx); err != nil {
			return "", err
		}
	}
	digest, err := idx.Digest()
	if err != nil {
		return "", err
	}
	return repo + "@" + digest.String(), nil
}

// imagePlatforms are the platforms of the images: the operator image's.
func (o Options) imagePlatforms() []v1.Platform {
	if len(o.ImagePlatforms) == 0 {
		return operatorimage.Platforms
	}
	return o.ImagePlatforms
}

// progress is where progress goes: o.Progress, or nowhere.
func (o Options) progress() io.Writer {
	if o.Progress == nil {
		return io.Discard
	}
	return o.Progress
}
