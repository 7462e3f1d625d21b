package localcluster

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/caravan-dev/caravan/internal/debimage"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// pushDebianImages builds the runtime's images unless cached, and pushes them
// to the cluster's registry under their repositories.
func (c *Cluster) pushDebianImages(ctx context.Context, opts Options) error {
	reg := image.Registry{Address: c.RegistryAddress, Insecure: true}
	for _, img := range runtime.Images {
		start := time.Now()
		ref, _, err := debimage.Push(ctx, opts.CacheDir, img, reg, c.RegistryAddress, opts.Progress)
		if err != nil {
			return err
		}
		fmt.Fprintf(opts.Progress, "  pushed %s (%s)\n", ref, time.Since(start).Round(100*time.Millisecond))
	}
	return nil
}

// pushPauseImage pushes the pod sandbox image, the pause program alone, to the cluster's
// registry and returns its reference.
func (c *Cluster) pushPauseImage(ctx context.Context, pause string) (string, error) {
	ref := c.RegistryAddress + "/caravan/pause:" + PauseVersion
	if err := c.PushProgram(ctx, pause, ref); err != nil {
		return "", fmt.Errorf("pushing the pause image: %w", err)
	}
	return ref, nil
}

// PushProgram pushes, as ref in the cluster's registry, an image that holds the static program
// at path alone, as its entrypoint /NAME.
func (c *Cluster) PushProgram(ctx context.Context, path, ref string) error {
	name := filepath.Base(path)
	return c.PushFiles(ctx, ref, []ImageFile{{Path: name, From: path}}, "/"+name)
}

// ImageFile is a file of an image PushFiles builds: its path in the image and the file of this
// machine it holds, executable; a directory that anyone may write (as /tmp) when From is empty.
type ImageFile struct {
	Path, From string
}

// PushFiles pushes, as ref in the cluster's registry, an image of this machine's architecture
// that holds files alone, whose entrypoint is the program at entrypoint and whose PATH is /bin.
func (c *Cluster) PushFiles(ctx context.Context, ref string, files []ImageFile, entrypoint string) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		if f.From == "" {
			if err := tw.WriteHeader(&tar.Header{Name: f.Path + "/", Mode: 0o1777, Typeflag: tar.TypeDir}); err != nil {
				return err
			}
			continue
		}
		data, err := os.ReadFile(f.From)
		if err != nil {
			return fmt.Errorf("reading %s for the image %s: %w", f.From, ref, err)
		}
		if err := tw.WriteHeader(&tar.Header{Name: f.Path, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", goruntime.GOARCH
	cfg.Config.Entrypoint = []string{entrypoint}
	cfg.Config.Env = []string{"PATH=/bin"}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return err
	}
	return image.Push(ctx, image.Registry{Address: c.RegistryAddress, Insecure: true}, ref, img)
}
