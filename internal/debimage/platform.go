// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package debimage

import v1 "github.com/google/go-containerregistry/pkg/v1"

// debianArch returns the architecture of pkgs: the first that is not "all".
func debianArch(pkgs []Package) string {
	for _, p := range pkgs {
		if p.Arch != "all" {
			return p.Arch
		}
	}
	return "all"
}

// ociPlatform returns the OCI architecture and variant of a Debian architecture.
func ociPlatform(arch string) v1.Platform {
	switch arch {
	case "arm64":
		return v1.Platform{Architecture: "arm64", Variant: "v8"}
	case "armhf":
		return v1.Platform{Architecture: "arm", Variant: "v7"}
	case "armel":
		return v1.Platform{Architecture: "arm", Variant: "v5"}
	case "i386":
		return v1.Platform{Architecture: "386"}
	case "ppc64el":
		return v1.Platform{Architecture: "ppc64le"}
	default:
		return v1.Platform{Architecture: arch}
	}
}
