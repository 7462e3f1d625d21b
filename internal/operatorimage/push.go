package operatorimage

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/caravan-dev/caravan/internal/gobuild"
	"github.com/caravan-dev/caravan/internal/image"
)

// Repository is the repository the operator image is pushed to by default,
// under the registry given.
const Repository = "caravan/operator"

// Options say what to build and where to push it.
type Options struct {
	Source Source
	// Platforms are the platforms to build the image for; the package's
	// Platforms when empty.
	Platforms []v1.Platform
	// Registry is pushed to; Repository and Tag name the image in it.
	Registry   image.Registry
	Repository string
	// Tag is the image's tag in Repository; the source's version when empty.
	Tag string
	// BinDir keeps the built binaries between builds.
	BinDir string
	// CABundle is the CA certificates file the image carries; HostCACertificates when empty.
	CABundle string
	// Progress receives what is being done.
	Progress io.Writer
}

// Result is a pushed operator image.
type Result struct {
	// Reference is the index by digest: <registry>/<repository>@sha256:….
	Reference string
	// Tagged is the same index by tag.
	Tagged string
	// Digest is the index digest.
	Digest string
	// CompressedSize is, per platform, the size of the image's layers as pushed.
	CompressedSize map[string]int64
	// Binaries are, per platform, the operator binaries the images hold, in Options.BinDir.
	Binaries map[string]string
}

// BuildAndPush builds the binaries, assembles the image of each platform,
// and pushes their index by tag, returning it by digest too.
func BuildAndPush(ctx context.Context, o Options) (Result, error) {
	platforms := o.Platforms
	if len(platforms) == 0 {
		platforms = Platforms
	}
	caPath := o.CABundle
	if caPath == "" {
		caPath = HostCACertificates
	}
	ca, err := os.ReadFile(caPath)
	if err != nil {
		return Result{}, fmt.Errorf("reading the CA certificates the image carries (install Debian's ca-certificates, or give a bundle): %w", err)
	}
	repository := o.Repository
	if repository == "" {
		repository = Repository
	}
	tag := o.Tag
	if tag == "" {
		tag = o.Source.version()
	}
	ref := strings.TrimSuffix(o.Registry.Address, "/") + "/" + strings.Trim(repository, "/") + ":" + tag
	if _, err := name.NewTag(ref, name.StrictValidation); err != nil {
		return Result{}, fmt.Errorf("operator image %q: %w", ref, err)
	}
	progress := o.Progress
	if progress == nil {
		progress = io.Discard
	}
	// Concurrent builds (installs side by side) share the binaries: one at a time.
	if err := os.MkdirAll(o.BinDir, 0o755); err != nil {
		return Result{}, err
	}
	unlock, err := gobuild.Lock(filepath.Join(o.BinDir, "build.lock"))
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	images := map[string]v1.Image{}
	sizes := map[string]int64{}
	bins := map[string]string{}
	for _, p := range platforms {
		fmt.Fprintf(progress, "building the operator binary for %s (a cold build takes a few minutes)\n", p.String())
		bin, err := o.Source.Build(ctx, p, o.BinDir, progress)
		if err != nil {
			return Result{}, err
		}
		img, err := Image(bin, p, o.Source, ca)
		if err != nil {
			return Result{}, err
		}
		images[p.String()], sizes[p.String()], bins[p.String()] = img, compressedSize(img), bin
	}
	idx, err := Index(images, platforms)
	if err != nil {
		return Result{}, err
	}
	digest, err := idx.Digest()
	if err != nil {
		return Result{}, err
	}
	fmt.Fprintf(progress, "pushing %s\n", ref)
	if err := image.PushIndex(ctx, o.Registry, ref, idx); err != nil {
		return Result{}, err
	}
	repo := ref[:strings.LastIndex(ref, ":")]
	return Result{Reference: repo + "@" + digest.String(), Tagged: ref, Digest: digest.String(), CompressedSize: sizes, Binaries: bins}, nil
}

// compressedSize sums the sizes of img's layers as stored in a registry;
// -1 when they cannot be read.
func compressedSize(img v1.Image) int64 {
	layers, err := img.Layers()
	if err != nil {
		return -1
	}
	var total int64
	for _, l := range layers {
		n, err := l.Size()
		if err != nil {
			return -1
		}
		total += n
	}
	return total
}

// DefaultBinDir is where the operator binaries are kept under the cache directory.
func DefaultBinDir(cacheDir string) string {
	return filepath.Join(cacheDir, "operator-image")
}

// PushLocal builds the operator image of the source tree around dir and pushes it to registry.
// The image is of version, for this machine's platform, built into the binaries under cacheDir;
// it goes over plain HTTP to registry (a local cluster's), and PushLocal returns it by digest.
func PushLocal(ctx context.Context, dir, version, registry, cacheDir string, progress io.Writer) (string, error) {
	src, err := FindSource(ctx, dir)
	if err != nil {
		return "", err
	}
	src.Version = version
	res, err := BuildAndPush(ctx, Options{Source: src,
		Platforms: []v1.Platform{{OS: "linux", Architecture: runtime.GOARCH}},
		Registry:  image.Registry{Address: registry, Insecure: true},
		BinDir:    DefaultBinDir(cacheDir), Progress: progress})
	if err != nil {
		return "", err
	}
	return res.Reference, nil
}
