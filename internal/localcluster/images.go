package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/caravan-dev/caravan/internal/debimage"
	"github.com/caravan-dev/caravan/internal/gobuild"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/operatorimage"
	"github.com/caravan-dev/caravan/internal/platform"
)

// DebianImage is an image made from Debian's packages, and the repository
// (with its tag) it is pushed as.
type DebianImage struct {
	Repository string
	Definition debimage.Definition
}

// DebianImages are the images the local registry serves from Debian's
// packages: the platforms' default base image, and the builder pods' image.
var DebianImages = []DebianImage{
	{platform.DefaultBaseImage, debimage.Base},
	{platform.DefaultBuilderImage, debimage.Builder},
}

// DebianImageNamed is the image of DebianImages whose definition is called name (base, builder),
// or nil.
func DebianImageNamed(name string) *DebianImage {
	for _, di := range DebianImages {
		if di.Definition.Name == name {
			return &di
		}
	}
	return nil
}

// DebianImagesDir is where the images made from Debian's packages are
// kept under the cache, with apt's state and the downloaded packages.
func DebianImagesDir(cacheDir string) string { return filepath.Join(cacheDir, "debimage") }

// BuildDebianImage builds def into the cache, or reads it from there;
// concurrent callers wait for each other, so each image is built once. The
// images trust this machine's CA certificates besides Debian's, as the
// operator image does: builder pods reach Maven repositories through the
// machine's network.
func BuildDebianImage(ctx context.Context, cacheDir string, def debimage.Definition, progress io.Writer) (v1.Image, error) {
	hostCAs, err := os.ReadFile(operatorimage.HostCACertificates)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading this machine's CA certificates: %w", err)
	}
	dir := DebianImagesDir(cacheDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	unlock, err := gobuild.Lock(filepath.Join(dir, "build.lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	return debimage.Options{CacheDir: dir, Progress: progress, ExtraCACertificates: hostCAs}.Build(ctx, def)
}

// pushDebianImages builds the Debian images unless cached, and pushes them
// to the cluster's registry under their repositories.
func (c *Cluster) pushDebianImages(ctx context.Context, opts Options) error {
	reg := image.Registry{Address: c.RegistryAddress, Insecure: true}
	for _, di := range DebianImages {
		start := time.Now()
		ref, _, err := di.Push(ctx, opts.CacheDir, reg, c.RegistryAddress, opts.Progress)
		if err != nil {
			return err
		}
		fmt.Fprintf(opts.Progress, "  pushed %s (%s)\n", ref, time.Since(start).Round(100*time.Millisecond))
	}
	return nil
}

// Push builds di unless cached and pushes it to reg as prefix/Repository;
// it returns the reference pushed and the image's digest.
func (di DebianImage) Push(ctx context.Context, cacheDir string, reg image.Registry, prefix string, progress io.Writer) (string, v1.Hash, error) {
	img, err := BuildDebianImage(ctx, cacheDir, di.Definition, progress)
	if err != nil {
		return "", v1.Hash{}, err
	}
	ref := strings.TrimSuffix(prefix, "/") + "/" + di.Repository
	if err := image.Push(ctx, reg, ref, img); err != nil {
		return "", v1.Hash{}, fmt.Errorf("pushing %s: %w", ref, err)
	}
	digest, err := img.Digest()
	return ref, digest, err
}
