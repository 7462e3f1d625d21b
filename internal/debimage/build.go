// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package debimage

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/caravan-dev/caravan/internal/runtime"
)

// DefaultMaxAge is how long a resolved package list is reused before apt is asked again.
// Within it a build needs no network at all; after it, one apt-get update, and a new image
// only if Debian moved a version (security updates reach images within a day).
const DefaultMaxAge = 24 * time.Hour

// formatVersion changes whenever the way images are assembled changes, so cached images
// made the old way are not reused.
const formatVersion = "1"

// Labels the images carry.
const (
	LabelName     = "dev.caravan.debimage.name"
	LabelPackages = "dev.caravan.debimage.packages"
)

// Options control a build.
type Options struct {
	// CacheDir holds apt's state, the downloaded packages, the resolved lists and the images.
	CacheDir string
	// Progress receives one line per step; nil discards them.
	Progress io.Writer
	// Refresh resolves the packages again even if a resolved list younger than MaxAge exists.
	Refresh bool
	// MaxAge is how long a resolved list is reused; zero means DefaultMaxAge.
	MaxAge time.Duration
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// ExtraCACertificates is a PEM bundle trusted besides Debian's CA certificates: the
	// machine's own bundle, say, when its network passes through a TLS proxy of its own.
	ExtraCACertificates []byte
}

// Build returns the image of def, from cacheDir's images when its pinned packages were built
// before; progress lines go to progress.
func Build(ctx context.Context, def runtime.Image, cacheDir string, progress io.Writer) (v1.Image, error) {
	return Options{CacheDir: cacheDir, Progress: progress}.Build(ctx, def)
}

// Build returns the image of def, building it and its parents unless cached.
func (o Options) Build(ctx context.Context, def runtime.Image) (v1.Image, error) {
	a, err := newApt(filepath.Join(o.CacheDir, "apt"))
	if err != nil {
		return nil, err
	}
	s := &session{Options: o, apt: a}
	b, err := s.build(ctx, def)
	if err != nil {
		return nil, fmt.Errorf("building the %s image: %w", def.Name, err)
	}
	return b.img, nil
}

// session is one Build call: it updates apt's lists at most once.
type session struct {
	Options
	apt apt
	// updated is set once apt-get update ran in this session.
	updated bool
}

// built is an image and the packages it holds.
type built struct {
	img  v1.Image
	pkgs []Package
	// key names the image in the cache; it hashes the packages and how they are assembled.
	key string
}

// build returns def's image from the cache, or assembles it after its parent's.
func (s *session) build(ctx context.Context, def runtime.Image) (*built, error) {
	var parent *built
	if def.Parent != nil {
		var err error
		if parent, err = s.build(ctx, *def.Parent); err != nil {
			return nil, err
		}
	}
	pkgs, reused, err := s.pin(ctx, def, parent, s.Refresh)
	if err != nil {
		return nil, err
	}
	b, err := s.buildPinned(ctx, def, pkgs, parent)
	var dl *downloadError
	if err != nil && reused && errors.As(err, &dl) {
		s.printf("the resolved versions are no longer served; resolving again")
		if pkgs, _, err = s.pin(ctx, def, parent, true); err != nil {
			return nil, err
		}
		b, err = s.buildPinned(ctx, def, pkgs, parent)
	}
	return b, err
}

// buildPinned returns the image of def's pinned packages from the cache, or assembles it.
func (s *session) buildPinned(ctx context.Context, def runtime.Image, pkgs []Package, parent *built) (*built, error) {
	b := &built{pkgs: pkgs, key: imageKey(def, pkgs, parent, s.ExtraCACertificates)}
	dir := filepath.Join(s.CacheDir, "images", def.Name+"-"+b.key)
	var err error
	if b.img, err = loadImage(dir); err == nil {
		s.printf("image %s: %d packages, cached in %s", def.Name, len(pkgs), dir)
		return b, nil
	}
	if err := s.download(ctx, pkgs); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(s.CacheDir, "work-")
	if err != nil {
		return nil, fmt.Errorf("creating a work directory: %w", err)
	}
	defer os.RemoveAll(work)
	img, err := s.assemble(ctx, work, def, pkgs, parent)
	if err != nil {
		return nil, err
	}
	if b.img, err = storeImage(dir, img); err != nil {
		return nil, err
	}
	d, err := b.img.Digest()
	if err != nil {
		return nil, fmt.Errorf("reading the image digest: %w", err)
	}
	s.printf("packed image %s %s", def.Name, d)
	return b, nil
}

// downloadError is a failure to download pinned packages.
type downloadError struct{ err error }

func (e *downloadError) Error() string { return e.err.Error() }
func (e *downloadError) Unwrap() error { return e.err }

// download fetches the packages' .deb files that the cache lacks.
func (s *session) download(ctx context.Context, pkgs []Package) error {
	debDir := filepath.Join(s.CacheDir, "debs")
	if err := os.MkdirAll(debDir, 0o755); err != nil {
		return fmt.Errorf("creating the package cache: %w", err)
	}
	s.printf("downloading %d packages", len(pkgs))
	n, err := s.apt.download(ctx, debDir, pkgs)
	if err != nil {
		return &downloadError{err: err}
	}
	var size int64
	for _, p := range pkgs {
		if fi, err := os.Stat(filepath.Join(debDir, p.debFile())); err == nil {
			size += fi.Size()
		}
	}
	s.printf("have %d packages (%.1f MB), %d downloaded now", len(pkgs), float64(size)/1e6, n)
	return nil
}

// assemble unpacks the packages that def adds to its parent and packs them, with the files
// maintainer scripts would have made, onto the parent's image or an empty one. Its layers
// are files in work, which must outlive the image.
func (s *session) assemble(ctx context.Context, work string, def runtime.Image, pkgs []Package, parent *built) (v1.Image, error) {
	root := filepath.Join(work, "root")
	added := pkgs
	if parent != nil {
		added = without(pkgs, parent.pkgs)
	}
	s.printf("unpacking %d packages", len(added))
	if err := unpack(ctx, filepath.Join(s.CacheDir, "debs"), added, root); err != nil {
		return nil, err
	}
	arch := debianArch(pkgs)
	files := definitionFiles(def, arch, pkgs)
	if parent == nil {
		system, err := systemFiles(root, s.ExtraCACertificates)
		if err != nil {
			return nil, err
		}
		files = append(system, files...)
	}
	s.printf("packing %d packages", len(added))
	pkgLayer, err := writeLayerFile(filepath.Join(work, "packages.tar.gz"), func(tw *tar.Writer) error {
		return writeTree(tw, root)
	})
	if err != nil {
		return nil, err
	}
	fileLayer, err := writeLayerFile(filepath.Join(work, "files.tar.gz"), func(tw *tar.Writer) error {
		return writeFiles(tw, files)
	})
	if err != nil {
		return nil, err
	}
	img, err := imageBase(def, arch, parent)
	if err != nil {
		return nil, err
	}
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: pkgLayer, History: history(fmt.Sprintf("debimage %s: %d Debian packages", def.Name, len(added)))},
		mutate.Addendum{Layer: fileLayer, History: history("debimage " + def.Name + ": users, trust stores and links")})
	if err != nil {
		return nil, fmt.Errorf("adding the layers: %w", err)
	}
	return withLabels(img, def, pkgs)
}

// imageBase returns the parent's image, or an empty OCI image configured from def.
func imageBase(def runtime.Image, arch string, parent *built) (v1.Image, error) {
	if parent != nil {
		return parent.img, nil
	}
	env := make([]string, len(def.Env))
	for i, e := range def.Env {
		env[i] = expandArch(e, arch)
	}
	platform := ociPlatform(arch)
	img, err := mutate.ConfigFile(
		mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON),
		&v1.ConfigFile{
			Architecture: platform.Architecture,
			Variant:      platform.Variant,
			OS:           "linux",
			Created:      v1.Time{Time: layerTime},
			RootFS:       v1.RootFS{Type: "layers"},
			Config: v1.Config{
				Env:        env,
				User:       fmt.Sprintf("%d:%d", userID, userID),
				WorkingDir: workDir,
			},
		})
	if err != nil {
		return nil, fmt.Errorf("configuring the image: %w", err)
	}
	return img, nil
}

// withLabels returns img labelled with def's name and its pinned packages.
func withLabels(img v1.Image, def runtime.Image, pkgs []Package) (v1.Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading the image config: %w", err)
	}
	cfg := *cf.Config.DeepCopy()
	labels := map[string]string{}
	for k, v := range cfg.Labels {
		labels[k] = v
	}
	labels[LabelName] = def.Name
	labels[LabelPackages] = strings.TrimSpace(strings.ReplaceAll(string(packageList(pkgs)), "\n", " "))
	cfg.Labels = labels
	img, err = mutate.Config(img, cfg)
	if err != nil {
		return nil, fmt.Errorf("labelling the image: %w", err)
	}
	return img, nil
}

// history returns a layer's history entry, dated layerTime.
func history(createdBy string) v1.History {
	return v1.History{Created: v1.Time{Time: layerTime}, CreatedBy: createdBy, Comment: "caravan"}
}

// imageKey hashes what decides an image's content: the assembly's version, def's links and
// environment, the pinned packages and the parent's key.
func imageKey(def runtime.Image, pkgs []Package, parent *built, extraCAs []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "format %s\nname %s\nenv %q\n", formatVersion, def.Name, def.Env)
	if len(extraCAs) > 0 {
		fmt.Fprintf(h, "extra CAs %x\n", sha256.Sum256(extraCAs))
	}
	for _, f := range definitionFiles(def, "", nil) {
		fmt.Fprintf(h, "link %s %s\n", f.path, f.target)
	}
	h.Write(packageList(pkgs))
	if parent != nil {
		fmt.Fprintf(h, "parent %s\n", parent.key)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// loadImage returns the image of the OCI layout at dir.
func loadImage(dir string) (v1.Image, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return nil, fmt.Errorf("reading the cached image index: %w", err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("reading the cached image index: %w", err)
	}
	if len(m.Manifests) != 1 {
		return nil, fmt.Errorf("the cached image index %s holds %d images", dir, len(m.Manifests))
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		return nil, fmt.Errorf("reading the cached image: %w", err)
	}
	return img, nil
}

// storeImage writes img as an OCI layout at dir, whole or not at all, and returns it read
// back from there.
func storeImage(dir string, img v1.Image) (v1.Image, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("creating the image cache: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("creating the image cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	p, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return nil, fmt.Errorf("writing the image layout: %w", err)
	}
	if err := p.AppendImage(img); err != nil {
		return nil, fmt.Errorf("writing the image layout: %w", err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("replacing the cached image: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("storing the image layout: %w", err)
	}
	return loadImage(dir)
}

// printf writes one progress line.
func (s *session) printf(format string, args ...any) {
	if s.Progress != nil {
		fmt.Fprintf(s.Progress, format+"\n", args...)
	}
}
