// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package debimage

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Extract unpacks the named packages, without their dependencies, under root, and returns the
// versions it unpacked: tools that run on this machine beside its own libraries, or that a
// build compiles against. Each call updates apt's lists once.
func (o Options) Extract(ctx context.Context, names []string, root string) ([]Package, error) {
	a, err := newApt(filepath.Join(o.CacheDir, "apt"))
	if err != nil {
		return nil, err
	}
	s := &session{Options: o, apt: a}
	s.printf("updating apt's package lists")
	if err := a.update(ctx); err != nil {
		return nil, err
	}
	closure, err := a.resolve(ctx, names, nil)
	if err != nil {
		return nil, err
	}
	var pkgs []Package
	for _, p := range closure {
		if slices.Contains(names, p.Name) {
			pkgs = append(pkgs, p)
		}
	}
	if len(pkgs) != len(names) {
		return nil, fmt.Errorf("apt resolves %d of the packages %s", len(pkgs), strings.Join(names, ", "))
	}
	if err := s.download(ctx, pkgs); err != nil {
		return nil, err
	}
	if err := unpack(ctx, filepath.Join(o.CacheDir, "debs"), pkgs, root); err != nil {
		return nil, err
	}
	return pkgs, nil
}
