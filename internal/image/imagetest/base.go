// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package imagetest

import (
	"context"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/caravan-dev/caravan/internal/image"
)

// PushBase pushes a small random image (two layers of 512 random bytes) to repository
// in reg, tagged latest, and returns its reference, "<address>/<repository>:latest".
func PushBase(t testing.TB, reg *Registry, repository string) string {
	t.Helper()
	img, err := random.Image(512, 2)
	if err != nil {
		t.Fatalf("making a random base image: %v", err)
	}
	return PushImage(t, reg, repository+":latest", img)
}

// PushImage pushes img to ref ("<repository>:<tag>", in reg) and returns the full
// reference, "<address>/<repository>:<tag>".
func PushImage(t testing.TB, reg *Registry, ref string, img v1.Image) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	full := reg.Address + "/" + ref
	if err := image.Push(ctx, reg.Config(), full, img); err != nil {
		t.Fatalf("pushing %s: %v", full, err)
	}
	return full
}
