// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package debimage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/caravan-dev/caravan/internal/gobuild"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/operatorimage"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// CacheDir is where the runtime's images are kept under Caravan's cache, with apt's state
// and the downloaded packages.
func CacheDir(cacheDir string) string { return filepath.Join(cacheDir, "debimage") }

// BuildCached builds img into Caravan's cache, or reads it from there; concurrent callers
// wait for each other, so each image is built once. The images trust this machine's CA
// certificates besides Debian's, as the operator image does: builder pods reach Maven
// repositories through the machine's network.
func BuildCached(ctx context.Context, cacheDir string, img runtime.Image, progress io.Writer) (v1.Image, error) {
	hostCAs, err := os.ReadFile(operatorimage.HostCACertificates)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading this machine's CA certificates: %w", err)
	}
	dir := CacheDir(cacheDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	unlock, err := gobuild.Lock(filepath.Join(dir, "build.lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	return Options{CacheDir: dir, Progress: progress, ExtraCACertificates: hostCAs}.Build(ctx, img)
}

// Push builds img unless cached and pushes it to reg as prefix/Repository; it returns the
// reference pushed and the image's digest.
func Push(ctx context.Context, cacheDir string, img runtime.Image, reg image.Registry, prefix string, progress io.Writer) (string, v1.Hash, error) {
	built, err := BuildCached(ctx, cacheDir, img, progress)
	if err != nil {
		return "", v1.Hash{}, err
	}
	ref := strings.TrimSuffix(prefix, "/") + "/" + img.Repository
	if err := image.Push(ctx, reg, ref, built); err != nil {
		return "", v1.Hash{}, fmt.Errorf("pushing %s: %w", ref, err)
	}
	digest, err := built.Digest()
	return ref, digest, err
}
