// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package debimage

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// layerTime dates every layer entry and the image, so an image depends only on its content.
var layerTime = time.Unix(0, 0).UTC()

// file is one entry of a generated layer: a regular file, a directory or a symlink.
type file struct {
	// path is absolute and clean.
	path string
	// mode holds the type (fs.ModeDir, fs.ModeSymlink or none) and the permissions,
	// including fs.ModeSetuid, fs.ModeSetgid and fs.ModeSticky.
	mode     fs.FileMode
	uid, gid int
	data     []byte
	target   string
}

// writeLayerFile writes to path a gzip-compressed tar made by fill, and returns it as a layer.
func writeLayerFile(path string, fill func(*tar.Writer) error) (v1.Layer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("creating a layer file: %w", err)
	}
	defer f.Close()
	zw, err := gzip.NewWriterLevel(f, gzip.BestSpeed)
	if err != nil {
		return nil, fmt.Errorf("compressing a layer: %w", err)
	}
	tw := tar.NewWriter(zw)
	if err := fill(tw); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("closing a layer's tar: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("closing a layer's compression: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("closing a layer file: %w", err)
	}
	layer, err := tarball.LayerFromFile(path, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("reading a layer file: %w", err)
	}
	return layer, nil
}

// writeTree writes the tree under root as tar entries in lexical order, owned by root and
// dated layerTime; files that share an inode become hard links to the first of them.
func writeTree(tw *tar.Writer, root string) error {
	seen := map[[2]uint64]string{}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("walking the image's files: %w", err)
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("reading the image's file %s: %w", rel, err)
		}
		name := filepath.ToSlash(rel)
		hdr := &tar.Header{Name: name, Mode: tarMode(info.Mode()), ModTime: layerTime}
		switch t := info.Mode().Type(); {
		case t == fs.ModeDir:
			hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
		case t == fs.ModeSymlink:
			hdr.Typeflag = tar.TypeSymlink
			if hdr.Linkname, err = os.Readlink(p); err != nil {
				return fmt.Errorf("reading the image's symlink %s: %w", rel, err)
			}
		case t.IsRegular():
			if id, ok := inode(info); ok {
				if first, dup := seen[id]; dup {
					hdr.Typeflag, hdr.Linkname = tar.TypeLink, first
					break
				}
				seen[id] = name
			}
			hdr.Typeflag, hdr.Size = tar.TypeReg, info.Size()
		default:
			return fmt.Errorf("the image's file %s is of unsupported type %v", rel, t)
		}
		return writeEntry(tw, hdr, p)
	})
}

// writeEntry writes hdr and, for a regular file, the content of the file at p.
func writeEntry(tw *tar.Writer, hdr *tar.Header, p string) error {
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("writing the layer entry %s: %w", hdr.Name, err)
	}
	if hdr.Typeflag != tar.TypeReg {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("opening the image's file %s: %w", hdr.Name, err)
	}
	defer f.Close()
	if _, err := io.CopyN(tw, f, hdr.Size); err != nil {
		return fmt.Errorf("copying the image's file %s: %w", hdr.Name, err)
	}
	return nil
}

// writeFiles writes files as tar entries sorted by path, each preceded by its parent
// directories (root-owned, mode 0755) unless files lists them.
func writeFiles(tw *tar.Writer, files []file) error {
	byName := map[string]file{}
	for _, f := range files {
		rel := strings.TrimPrefix(f.path, "/")
		byName[rel] = f
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			if _, ok := byName[d]; !ok {
				byName[d] = file{path: "/" + d, mode: fs.ModeDir | 0o755}
			}
		}
	}
	for _, name := range slices.Sorted(mapsKeys(byName)) {
		f := byName[name]
		hdr := &tar.Header{
			Name: name, Mode: tarMode(f.mode), Uid: f.uid, Gid: f.gid, ModTime: layerTime,
			Typeflag: tar.TypeReg, Size: int64(len(f.data)),
		}
		switch f.mode.Type() {
		case fs.ModeDir:
			hdr.Typeflag, hdr.Name, hdr.Size = tar.TypeDir, name+"/", 0
		case fs.ModeSymlink:
			hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeSymlink, f.target, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("writing the layer entry %s: %w", name, err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return fmt.Errorf("writing the layer file %s: %w", name, err)
		}
	}
	return nil
}

// mapsKeys yields the keys of m.
func mapsKeys(m map[string]file) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// tarMode returns the tar mode bits of m: permissions plus setuid, setgid and sticky.
func tarMode(m fs.FileMode) int64 {
	mode := int64(m.Perm())
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	return mode
}
