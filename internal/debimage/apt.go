// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package debimage

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// errNoApt is returned on hosts without apt-get.
var errNoApt = errors.New("apt-get not found: this builds images from Debian's packages; " +
	"point the platform's baseImage at an image in a registry instead")

// Package is one pinned Debian package.
type Package struct {
	Name    string
	Version string
	Arch    string
}

// String spells p as apt does, name:arch=version.
func (p Package) String() string {
	return p.Name + ":" + p.Arch + "=" + p.Version
}

// ParsePackages reads the packages of an image's LabelPackages: name:arch=version, space-separated.
func ParsePackages(label string) ([]Package, error) {
	var out []Package
	for _, field := range strings.Fields(label) {
		nameArch, version, ok := strings.Cut(field, "=")
		name, arch, ok2 := strings.Cut(nameArch, ":")
		if !ok || !ok2 || name == "" || arch == "" || version == "" {
			return nil, fmt.Errorf("%q in %s is not name:arch=version", field, LabelPackages)
		}
		out = append(out, Package{Name: name, Version: version, Arch: arch})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s lists no package", LabelPackages)
	}
	return out, nil
}

// debFile is the name apt-get download gives p's .deb file.
func (p Package) debFile() string {
	return p.Name + "_" + strings.ReplaceAll(p.Version, ":", "%3a") + "_" + p.Arch + ".deb"
}

// apt runs apt-get and apt-cache with their lists, cache and dpkg status under dir,
// reading the host's sources but never its package state, so it needs no root.
type apt struct {
	dir string
}

// newApt checks that apt-get is installed and prepares apt's directories under dir.
func newApt(dir string) (apt, error) {
	if _, err := exec.LookPath("apt-get"); err != nil {
		return apt{}, errNoApt
	}
	for _, d := range []string{"lists/partial", "cache/archives/partial"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return apt{}, fmt.Errorf("creating apt's directory: %w", err)
		}
	}
	return apt{dir: dir}, nil
}

// options returns the options that point apt at its own state, with status as dpkg's.
func (a apt) options(status string) []string {
	opts := []string{
		"-o", "Dir::State::Lists=" + filepath.Join(a.dir, "lists"),
		"-o", "Dir::Cache=" + filepath.Join(a.dir, "cache"),
		"-o", "Dir::State::status=" + status,
		"-o", "Debug::NoLocking=1",
		"-q",
	}
	if os.Geteuid() == 0 {
		// Root's apt would download as the _apt user, who cannot write to a private cache.
		opts = append(opts, "-o", "APT::Sandbox::User=root")
	}
	return opts
}

// run runs apt's tool name in dir with status as dpkg's status, and returns its output.
func (a apt) run(ctx context.Context, dir, status, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, append(a.options(status), args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "DEBIAN_FRONTEND=noninteractive")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", name, args[0], err, lastLines(stderr.String(), 5))
	}
	return stdout.Bytes(), nil
}

// emptyStatus returns the path of an empty dpkg status file, creating it if needed.
func (a apt) emptyStatus() (string, error) {
	p := filepath.Join(a.dir, "status-empty")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		return "", fmt.Errorf("writing an empty dpkg status: %w", err)
	}
	return p, nil
}

// update refreshes apt's package lists from the host's sources.
func (a apt) update(ctx context.Context) error {
	status, err := a.emptyStatus()
	if err != nil {
		return err
	}
	_, err = a.run(ctx, a.dir, status, "apt-get", "update")
	return err
}

// hasLists reports whether apt's package lists have been fetched at least once.
func (a apt) hasLists() bool {
	entries, err := os.ReadDir(filepath.Join(a.dir, "lists"))
	if err != nil {
		return false
	}
	return slices.ContainsFunc(entries, func(e fs.DirEntry) bool {
		return strings.HasSuffix(e.Name(), "_Packages")
	})
}

// resolve returns the pinned closure of packages that apt's resolver installs into an empty
// system, without recommends, where the excluded packages count as already installed.
func (a apt) resolve(ctx context.Context, packages, exclude []string) ([]Package, error) {
	status, err := a.emptyStatus()
	if err != nil {
		return nil, err
	}
	if len(exclude) > 0 {
		out, err := a.run(ctx, a.dir, status, "apt-cache", append([]string{"show", "--no-all-versions"}, exclude...)...)
		if err != nil {
			return nil, err
		}
		status = filepath.Join(a.dir, "status-excluded")
		if err := os.WriteFile(status, heldStatus(parseStanzas(out)), 0o644); err != nil {
			return nil, fmt.Errorf("writing the dpkg status of excluded packages: %w", err)
		}
	}
	args := append([]string{"install", "--simulate", "--no-install-recommends"}, packages...)
	out, err := a.run(ctx, a.dir, status, "apt-get", args...)
	if err != nil {
		return nil, err
	}
	return parseSimulate(out)
}

// download fetches into debDir the .deb files of pkgs that are not there yet, and returns
// how many it fetched.
func (a apt) download(ctx context.Context, debDir string, pkgs []Package) (int, error) {
	var specs []string
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join(debDir, p.debFile())); err == nil {
			continue
		}
		specs = append(specs, p.Name+"="+p.Version)
	}
	if len(specs) == 0 {
		return 0, nil
	}
	status, err := a.emptyStatus()
	if err != nil {
		return 0, err
	}
	if _, err := a.run(ctx, debDir, status, "apt-get", append([]string{"download"}, specs...)...); err != nil {
		return 0, err
	}
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join(debDir, p.debFile())); err != nil {
			return 0, fmt.Errorf("apt-get download left no %s: %w", p.debFile(), err)
		}
	}
	return len(specs), nil
}

// instLine matches a line of apt-get's simulation that installs a package, such as
// "Inst libc6 (2.36-9 Debian:12/stable [amd64])" or, for a reinstall,
// "Inst tar [1.34] (1.34 Debian:12/stable [amd64])".
var instLine = regexp.MustCompile(`^Inst (\S+) (?:\[[^\]]*\] )?\((\S+) .*\[([^\]]+)\]\)`)

// parseSimulate returns the packages that apt-get's simulation output installs, sorted.
func parseSimulate(out []byte) ([]Package, error) {
	var pkgs []Package
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "Inst ") {
			continue
		}
		m := instLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("unexpected line in apt's simulation: %q", line)
		}
		name, _, _ := strings.Cut(m[1], ":")
		pkgs = append(pkgs, Package{Name: name, Version: m[2], Arch: m[3]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading apt's simulation: %w", err)
	}
	if len(pkgs) == 0 {
		return nil, errors.New("apt's simulation installs no package")
	}
	sortPackages(pkgs)
	return pkgs, nil
}

// sortPackages sorts pkgs by name, then architecture.
func sortPackages(pkgs []Package) {
	slices.SortFunc(pkgs, func(a, b Package) int {
		return strings.Compare(a.Name+":"+a.Arch, b.Name+":"+b.Arch)
	})
}

// parseStanzas returns the Package, Version and Architecture of each stanza of apt-cache show.
func parseStanzas(out []byte) []Package {
	var pkgs []Package
	var cur Package
	flush := func() {
		if cur.Name != "" && cur.Version != "" {
			pkgs = append(pkgs, cur)
		}
		cur = Package{}
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			flush()
			continue
		}
		k, v, ok := strings.Cut(line, ": ")
		switch {
		case !ok:
		case k == "Package":
			cur.Name = v
		case k == "Version":
			cur.Version = v
		case k == "Architecture":
			cur.Arch = v
		}
	}
	flush()
	return pkgs
}

// heldStatus returns a dpkg status in which pkgs are installed, held and depend on nothing,
// so apt's resolver takes them as present and neither installs nor upgrades them.
func heldStatus(pkgs []Package) []byte {
	var b bytes.Buffer
	for _, p := range pkgs {
		fmt.Fprintf(&b, "Package: %s\nStatus: hold ok installed\nArchitecture: %s\nVersion: %s\n\n", p.Name, p.Arch, p.Version)
	}
	return b.Bytes()
}

// lastLines returns the last n non-empty lines of s, joined by "; ".
func lastLines(s string, n int) string {
	lines := slices.DeleteFunc(strings.Split(s, "\n"), func(l string) bool { return strings.TrimSpace(l) == "" })
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}
