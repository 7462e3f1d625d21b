// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package debimage

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/caravan-dev/caravan/internal/runtime"
)

// The image's non-root user, whose home is writable.
const (
	userName = "camel"
	userID   = 1000
	userHome = "/home/camel"
	// workDir is the image's working directory, where kits put their files.
	workDir = runtime.DeploymentsDir
	// packagesFile lists the image's pinned packages inside the image.
	packagesFile = "/usr/share/caravan/packages.txt"
)

// unpack extracts the files of each package's .deb under debDir into root with dpkg-deb,
// running no maintainer script.
func unpack(ctx context.Context, debDir string, pkgs []Package, root string) error {
	for _, p := range pkgs {
		cmd := exec.CommandContext(ctx, "dpkg-deb", "-x", filepath.Join(debDir, p.debFile()), root)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("unpacking %s: %w: %s", p, err, lastLines(string(out), 3))
		}
	}
	return nil
}

// passwdAndGroup returns /etc/passwd and /etc/group holding root and the image's user.
func passwdAndGroup() (passwd, group []byte) {
	id := strconv.Itoa(userID)
	passwd = []byte("root:x:0:0:root:/root:/sbin/nologin\n" +
		userName + ":x:" + id + ":" + id + "::" + userHome + ":/sbin/nologin\n")
	group = []byte("root:x:0:\n" + userName + ":x:" + id + ":\n")
	return passwd, group
}

// nsswitch makes glibc read /etc/hosts before asking DNS, as the runtime maps the pod's
// name there; without the file, glibc asks DNS first.
const nsswitch = "passwd: files\ngroup: files\nhosts: files dns\n"

// systemFiles returns the files maintainer scripts would have made in a base image: the
// users, their homes, /tmp, glibc's name service order and the CA and Java trust stores.
// root holds the unpacked packages, whose CA certificates it reads.
func systemFiles(root string, extraCAs []byte) ([]file, error) {
	certs, err := readCertificates(root)
	if err != nil {
		return nil, err
	}
	if certs, err = withExtra(certs, extraCAs); err != nil {
		return nil, err
	}
	store, err := javaTrustStore(certs)
	if err != nil {
		return nil, err
	}
	passwd, group := passwdAndGroup()
	return []file{
		{path: "/etc/passwd", mode: 0o644, data: passwd},
		{path: "/etc/group", mode: 0o644, data: group},
		{path: "/etc/nsswitch.conf", mode: 0o644, data: []byte(nsswitch)},
		{path: "/etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: pemBundle(certs)},
		{path: "/etc/ssl/certs/java/cacerts", mode: 0o644, data: store},
		{path: "/root", mode: fs.ModeDir | 0o700},
		{path: userHome, mode: fs.ModeDir | 0o755, uid: userID, gid: userID},
		{path: workDir, mode: fs.ModeDir | 0o755, uid: userID, gid: userID},
		{path: "/tmp", mode: fs.ModeDir | fs.ModeSticky | 0o777},
	}, nil
}

// definitionFiles returns the files every image of def gets: its links, with "${arch}"
// expanded, and the list of its pinned packages.
func definitionFiles(def runtime.Image, arch string, pkgs []Package) []file {
	var files []file
	for p, target := range def.Links {
		files = append(files, file{
			path: expandArch(p, arch), mode: fs.ModeSymlink | 0o777, target: expandArch(target, arch),
		})
	}
	slices.SortFunc(files, func(a, b file) int { return strings.Compare(a.path, b.path) })
	return append(files, file{path: packagesFile, mode: 0o644, data: packageList(pkgs)})
}

// packageList returns pkgs one a line, as apt spells them.
func packageList(pkgs []Package) []byte {
	var b bytes.Buffer
	for _, p := range pkgs {
		b.WriteString(p.String() + "\n")
	}
	return b.Bytes()
}
