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

// PullPlatform returns the image of platform p that ref names: the manifest for p of an index,
// or the image itself when ref names no index. Only the manifest is read now. Every error is an
// *Error.
func PullPlatform(ctx context.Context, reg Registry, ref string, p v1.Platform) (v1.Image, error) {
	if err := ctx.Err(); err != nil {
		return nil, reg.classify(ctx, opPull, ref, err)
	}
	parsed, err := reg.parse(ref)
	if err != nil {
		return nil, reg.invalid(ref, err)
	}
	img, err := remote.Image(parsed, append(reg.options(ctx, parsed), remote.WithPlatform(p))...)
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
	files := map[string][]byte{}
	err = eachRegularFile(layers[len(layers)-1], "the top layer", func(hdr *tar.Header, r io.Reader) (bool, error) {
		content, err := io.ReadAll(r)
		if err != nil {
			return true, fmt.Errorf("reading %s from the top layer: %w", hdr.Name, err)
		}
		files[path.Join("/", hdr.Name)] = content
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}

// ReadFile returns the content of the regular file at the absolute path name in img, from the
// topmost layer that holds it; ok is false when none does. Layers are read in turn, from the top.
func ReadFile(img v1.Image, name string) (content []byte, ok bool, err error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, false, fmt.Errorf("reading the image layers: %w", err)
	}
	for i := len(layers) - 1; i >= 0 && !ok && err == nil; i-- {
		err = eachRegularFile(layers[i], "a layer", func(hdr *tar.Header, r io.Reader) (bool, error) {
			if path.Join("/", hdr.Name) != name {
				return false, nil
			}
			content, ok = nil, true
			if content, err = io.ReadAll(r); err != nil {
				return true, fmt.Errorf("reading %s: %w", name, err)
			}
			return true, nil
		})
	}
	if err != nil {
		return nil, false, err
	}
	return content, ok, nil
}

// eachRegularFile calls visit with each regular file of layer l, named what in errors, until
// visit says it is done or fails.
func eachRegularFile(l v1.Layer, what string, visit func(hdr *tar.Header, r io.Reader) (done bool, err error)) error {
	rc, err := l.Uncompressed()
	if err != nil {
		return fmt.Errorf("opening %s: %w", what, err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", what, err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		if done, err := visit(hdr, tr); err != nil || done {
			return err
		}
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
