// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

// Package debimage assembles OCI images from Debian's packages, without Docker and without root.
//
// apt resolves and downloads a pinned package set using its own state under Caravan's cache
// and the host's sources; dpkg-deb unpacks each package; the files that maintainer scripts
// would have made (users, trust stores, command links) are written in Go; and
// go-containerregistry packs the result as deterministic layers, so the same pinned set
// always gives the same image digest.
package debimage

import (
	"os"
	"slices"

	"github.com/caravan-dev/caravan/internal/runtime"
)

// allPackages returns the top-level packages of d and its parents, sorted.
func allPackages(d runtime.Image) []string {
	var all []string
	for p := &d; p != nil; p = p.Parent {
		all = append(all, p.Packages...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// allExcluded returns the excluded packages of d and its parents, sorted.
func allExcluded(d runtime.Image) []string {
	var all []string
	for p := &d; p != nil; p = p.Parent {
		all = append(all, p.Exclude...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// expandArch replaces "${arch}" in s with Debian's architecture name.
func expandArch(s, arch string) string {
	return os.Expand(s, func(k string) string {
		if k == "arch" {
			return arch
		}
		return "${" + k + "}"
	})
}
