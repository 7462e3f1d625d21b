// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package image

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"path"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Pull returns the image ref (a name without a registry host is looked up in reg). Only
// the manifest is read now; layers are read from the registry, with ctx, when used.
// Every error is an *Error.
func Pull(ctx context.Context, reg Registry, ref string) (v1.Image, error) {
	if err := ctx.Err(); err != nil {
		return nil, reg.classify(ctx, opPull, ref, err)
	}
	parsed, err := reg.parse(ref)
	if err != nil {
		return nil, reg.invalid(ref, err)
	}
	img, err := remote.Image(parsed, reg.options(ctx, parsed)...)
	if err != nil {
		return nil, reg.classify(ctx, opPull, parsed.Name(), err)
	}
	return img, nil
}

// Push writes img to ref (a name without a registry host is pushed to reg). Every
// error is an *Error.
func Push(ctx context.Context, reg Registry, ref string, img v1.Image) error {
	if err := ctx.Err(); err != nil {
		return reg.classify(ctx, opPush, ref, err)
	}
	parsed, err := reg.parse(ref)
	if err != nil {
		return reg.invalid(ref, err)
	}
	if err := remote.Write(parsed, img, reg.options(ctx, parsed)...); err != nil {
		return reg.classify(ctx, opPush, parsed.Name(), err)
	}
	return nil
}

// ListFiles returns the regular files of img's top layer by absolute path
// ("/etc/camel/kit/kit.properties"), with their content.
func ListFiles(img v1.Image) (map[string][]byte, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("reading the image layers: %w", err)
	}
	if len(layers) == 0 {
		return nil, fmt.Errorf("the image has no layer")
	}
	rc, err := layers[len(layers)-1].Uncompressed()
	if err != nil {
		return nil, fmt.Errorf("opening the top layer: %w", err)
	}
	defer rc.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the top layer: %w", err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("reading %s from the top layer: %w", hdr.Name, err)
		}
		files[path.Join("/", hdr.Name)] = content
	}
}

// ReadFile returns the content of the regular file at the absolute path name in img, from the
// topmost layer that holds it; ok is false when none does. Layers are read in turn, from the top.
func ReadFile(img v1.Image, name string) (content []byte, ok bool, err error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, false, fmt.Errorf("reading the image layers: %w", err)
	}
	for i := len(layers) - 1; i >= 0; i-- {
		content, ok, err := readLayerFile(layers[i], name)
		if err != nil || ok {
			return content, ok, err
		}
	}
	return nil, false, nil
}

// readLayerFile returns the content of the regular file name in layer l, if it holds it.
func readLayerFile(l v1.Layer, name string) ([]byte, bool, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return nil, false, fmt.Errorf("opening a layer: %w", err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("reading a layer: %w", err)
		}
		if hdr.Typeflag != tar.TypeReg || path.Join("/", hdr.Name) != name {
			continue
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			return nil, false, fmt.Errorf("reading %s: %w", name, err)
		}
		return content, true, nil
	}
}

// PushIndex writes the image index idx, and every image it holds, to ref (a
// name without a registry host is pushed to reg). Every error is an *Error.
func PushIndex(ctx context.Context, reg Registry, ref string, idx v1.ImageIndex) error {
	if err := ctx.Err(); err != nil {
		return reg.classify(ctx, opPush, ref, err)
	}
	parsed, err := reg.parse(ref)
	if err != nil {
		return reg.invalid(ref, err)
	}
	if err := remote.WriteIndex(parsed, idx, reg.options(ctx, parsed)...); err != nil {
		return reg.classify(ctx, opPush, parsed.Name(), err)
	}
	return nil
}
