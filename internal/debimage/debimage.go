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
)

// Definition names an image and the Debian packages it is made from.
type Definition struct {
	// Name names the image in the cache and in its labels.
	Name string
	// Packages are the top-level packages; apt adds what they depend on.
	Packages []string
	// Exclude lists packages apt must treat as present, so neither they nor their own
	// dependencies are installed. Each must be needed only by maintainer scripts or
	// features an integration never uses.
	Exclude []string
	// Links are symlinks, path to target, that maintainer scripts would have made.
	// "${arch}" in either stands for Debian's architecture name.
	Links map[string]string
	// Env holds the image's environment, NAME=value; "${arch}" is expanded as in Links.
	Env []string
	// Parent, when set, is the image this one adds its packages onto: its layers are
	// reused as they are, and only the packages it lacks make a new layer.
	Parent *Definition
}

// javaHome is where Debian's openjdk-17 packages install the JVM.
const javaHome = "/usr/lib/jvm/java-17-openjdk-${arch}"

// excludedFromJava lists packages of the JRE's closure that nothing in the image uses.
var excludedFromJava = []string{
	// The JRE's package depends on util-linux, yet no file of the JRE links or runs it;
	// it would bring PAM, systemd's and udev's libraries and a setuid su.
	"util-linux",
	// Only the desktop JRE's printing loads libcups (with dlopen); it would bring GnuTLS,
	// Kerberos, Avahi and D-Bus libraries.
	"libcups2",
	// ca-certificates runs openssl in its maintainer script to build the bundle; this
	// package writes the bundle in Go, so openssl and libssl3 are not needed.
	"openssl",
	// debconf only answers maintainer scripts' questions, and no script runs here.
	"debconf",
	// dpkg is needed only to install packages; the image is assembled without it.
	"dpkg",
}

// Base is the Java runtime image for integrations: Debian's headless OpenJDK 17. libc-bin
// holds glibc's C.UTF-8 locale, without which LANG=C.UTF-8 falls back to ASCII, and so
// does Java 17's default charset.
var Base = Definition{
	Name:     "base",
	Packages: []string{"openjdk-17-jre-headless", "libc-bin"},
	Exclude:  excludedFromJava,
	Links: map[string]string{
		"/usr/bin/java":    javaHome + "/bin/java",
		"/usr/bin/keytool": javaHome + "/bin/keytool",
	},
	Env: []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"JAVA_HOME=" + javaHome,
		"LANG=C.UTF-8",
	},
}

// Builder is the image of builder pods: Base plus Debian's Maven, with the shell and core
// utilities its mvn script runs.
var Builder = Definition{
	Name:     "builder",
	Packages: []string{"maven", "dash", "coreutils"},
	Exclude:  excludedFromJava,
	Links:    map[string]string{"/usr/bin/mvn": "/usr/share/maven/bin/mvn"},
	Parent:   &Base,
}

// allPackages returns the top-level packages of d and its parents, sorted.
func (d Definition) allPackages() []string {
	var all []string
	for p := &d; p != nil; p = p.Parent {
		all = append(all, p.Packages...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// allExcluded returns the excluded packages of d and its parents, sorted.
func (d Definition) allExcluded() []string {
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
