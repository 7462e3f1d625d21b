// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package image

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/caravan-dev/caravan/internal/kit"
)

// dirMode is the mode of the directories the layer creates for its files.
const dirMode = 0o755

// tarFiles writes files as a deterministic tar, so the same files always give the same
// bytes. Entries are sorted by path, each file preceded by its parent directories,
// owned by 0:0 and dated at the Unix epoch. Paths must be absolute and clean.
func tarFiles(files []kit.File) ([]byte, error) {
	byName := make(map[string]kit.File, len(files))
	dirs := map[string]bool{}
	for _, f := range files {
		if !path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path || f.Path == "/" {
			return nil, fmt.Errorf("kit file path %q is not an absolute, clean file path", f.Path)
		}
		rel := strings.TrimPrefix(f.Path, "/")
		if _, dup := byName[rel]; dup {
			return nil, fmt.Errorf("kit file %q is given twice", f.Path)
		}
		byName[rel] = f
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			dirs[d+"/"] = true
		}
	}
	for rel := range byName {
		if dirs[rel+"/"] {
			return nil, fmt.Errorf("kit file %q is also the parent directory of another file", "/"+rel)
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for d := range dirs {
			if !yield(d) {
				return
			}
		}
		for f := range byName {
			if !yield(f) {
				return
			}
		}
	})
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		if err := writeEntry(tw, n, byName); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("closing the kit layer tar: %w", err)
	}
	return buf.Bytes(), nil
}

// writeEntry writes the directory or file named n.
func writeEntry(tw *tar.Writer, n string, files map[string]kit.File) error {
	hdr := &tar.Header{Name: n, ModTime: time.Unix(0, 0), Typeflag: tar.TypeDir, Mode: dirMode}
	f, isFile := files[n]
	if isFile {
		hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, f.Mode, int64(len(f.Content))
		if hdr.Mode == 0 {
			hdr.Mode = kit.FileMode
		}
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("writing the kit layer entry %s: %w", n, err)
	}
	if isFile {
		if _, err := tw.Write(f.Content); err != nil {
			return fmt.Errorf("writing the kit layer file %s: %w", n, err)
		}
	}
	return nil
}

// newLayer returns a gzip-compressed layer of the tar data, of media type mt.
func newLayer(data []byte, mt types.MediaType) (v1.Layer, error) {
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(mt))
	if err != nil {
		return nil, fmt.Errorf("creating the kit layer: %w", err)
	}
	return layer, nil
}
