// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package image

import (
	"context"
	"fmt"
	"maps"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/caravan-dev/caravan/internal/kit"
)

// Result is a kit image pushed to the registry.
type Result struct {
	// Image is the pushed image by digest: <address>/<organization>/<repository>@sha256:….
	Image string
	// Digest is the image's manifest digest, sha256:….
	Digest string
	// BaseImage is the base image by digest: <registry>/<repository>@sha256:….
	BaseImage string
	// LayerDigest is the digest of the kit layer (compressed): equal files give equal
	// layer digests.
	LayerDigest string
}

// Build appends one layer holding files to baseImage and pushes the result to reg.
// A base image named without a registry host is looked up in reg. The image config is
// labelled with the kit hash found in files (kit.ImageHashLabel, see kit.HashOf), and
// pushed to <address>/<organization>/<repository>:<tag> (by digest only when tag is "").
// It returns the pushed image by digest. Every error is an *Error; a canceled ctx
// aborts the work and gives Reason Canceled, wrapping ctx.Err().
func Build(ctx context.Context, reg Registry, baseImage string, files []kit.File, repository, tag string) (Result, error) {
	layerData, err := tarFiles(files)
	if err != nil {
		return Result{}, reg.invalid(repository, err)
	}
	var labels map[string]string
	if hash := kit.HashOf(files); hash != "" {
		labels = map[string]string{kit.ImageHashLabel: hash}
	}
	return AppendLayer(ctx, reg, baseImage, func(mt types.MediaType) (v1.Layer, error) { return newLayer(layerData, mt) },
		"caravan: kit layer "+kit.Dir, labels, repository, tag)
}

// NewLayer makes a layer of the media type a manifest of type mt takes.
type NewLayer func(mt types.MediaType) (v1.Layer, error)

// AppendLayer pushes baseImage with the layer newLayer makes and labels added to its config.
// A baseImage without a registry host is looked up in reg. The image goes to
// <address>/<organization>/<repository>:<tag> in reg, by digest when tag is "". Every error
// is an *Error; a canceled ctx gives Reason Canceled, wrapping ctx.Err().
func AppendLayer(ctx context.Context, reg Registry, baseImage string, newLayer NewLayer, createdBy string,
	labels map[string]string, repository, tag string) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, reg.classify(ctx, opBase, baseImage, err)
	}
	base, err := reg.parse(baseImage)
	if err != nil {
		return Result{}, reg.invalid(baseImage, err)
	}
	repo, err := reg.repo(repository)
	if err != nil {
		return Result{}, reg.invalid(repository, err)
	}
	if tag != "" {
		if _, err := name.NewTag(repo.Name()+":"+tag, reg.nameOptions()...); err != nil {
			return Result{}, reg.invalid(repository+":"+tag, fmt.Errorf("kit image tag: %w", err))
		}
	}
	baseImg, err := remote.Image(base, reg.options(ctx, base)...)
	if err != nil {
		return Result{}, reg.classify(ctx, opBase, base.Name(), err)
	}
	baseDigest, err := baseImg.Digest()
	if err != nil {
		return Result{}, reg.classify(ctx, opBase, base.Name(), err)
	}
	mt, err := baseImg.MediaType()
	if err != nil {
		return Result{}, reg.classify(ctx, opBase, base.Name(), err)
	}
	layer, err := newLayer(layerMediaType(mt))
	if err != nil {
		return Result{}, reg.invalid(repo.Name(), err)
	}
	img, err := mutate.Append(baseImg, mutate.Addendum{Layer: layer, History: v1.History{CreatedBy: createdBy}})
	if err != nil {
		return Result{}, reg.classify(ctx, opBase, base.Name(), fmt.Errorf("appending the layer: %w", err))
	}
	if img, err = withLabels(img, labels); err != nil {
		return Result{}, reg.classify(ctx, opBase, base.Name(), err)
	}
	return push(ctx, reg, repo, tag, img, base.Context().Name()+"@"+baseDigest.String())
}

// withLabels returns img with labels added to its config.
func withLabels(img v1.Image, labels map[string]string) (v1.Image, error) {
	if len(labels) == 0 {
		return img, nil
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading the image config: %w", err)
	}
	c := cfg.Config.DeepCopy()
	if c.Labels == nil {
		c.Labels = map[string]string{}
	}
	maps.Copy(c.Labels, labels)
	img, err = mutate.Config(img, *c)
	if err != nil {
		return nil, fmt.Errorf("labelling the image config: %w", err)
	}
	return img, nil
}

// layerMediaType returns the layer media type that fits a manifest of media type mt.
func layerMediaType(mt types.MediaType) types.MediaType {
	if mt == types.OCIManifestSchema1 {
		return types.OCILayer
	}
	return types.DockerLayer
}

// push writes img to repo (by tag, or by digest when tag is "") and describes the result.
func push(ctx context.Context, reg Registry, repo name.Repository, tag string, img v1.Image, baseImage string) (Result, error) {
	digest, err := img.Digest()
	if err != nil {
		return Result{}, reg.classify(ctx, opBase, baseImage, fmt.Errorf("computing the kit image digest: %w", err))
	}
	layers, err := img.Layers()
	if err != nil {
		return Result{}, reg.classify(ctx, opBase, baseImage, fmt.Errorf("reading the kit image layers: %w", err))
	}
	layerDigest, err := layers[len(layers)-1].Digest()
	if err != nil {
		return Result{}, reg.classify(ctx, opBase, baseImage, fmt.Errorf("computing the kit layer digest: %w", err))
	}
	var target name.Reference = repo.Digest(digest.String())
	if tag != "" {
		target = repo.Tag(tag)
	}
	if err := remote.Write(target, img, reg.options(ctx, target)...); err != nil {
		return Result{}, reg.classify(ctx, opPush, target.Name(), err)
	}
	return Result{
		Image:       repo.Name() + "@" + digest.String(),
		Digest:      digest.String(),
		BaseImage:   baseImage,
		LayerDigest: layerDigest.String(),
	}, nil
}
