// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package debimage

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/caravan-dev/caravan/internal/runtime"
)

// pin returns def's pinned packages: the list resolved for the same request less than
// MaxAge ago unless refresh is set, or else apt's resolution after one update of its lists.
// reused reports that the list came from the cache.
func (s *session) pin(ctx context.Context, def runtime.Image, parent *built, refresh bool) (pkgs []Package, reused bool, err error) {
	path := filepath.Join(s.CacheDir, "resolved", def.Name+".txt")
	req := pinRequest(def, parent)
	if !refresh {
		if pkgs, ok := s.readPinned(path, req); ok {
			s.printf("resolved %s: %d packages, as of %s", def.Name, len(pkgs), filepath.Base(path))
			return pkgs, true, nil
		}
	}
	if !s.updated {
		s.printf("updating apt's package lists")
		if err := s.apt.update(ctx); err != nil {
			return nil, false, err
		}
		s.updated = true
	}
	s.printf("resolving %s", strings.Join(allPackages(def), " "))
	if pkgs, err = s.apt.resolve(ctx, allPackages(def), allExcluded(def)); err != nil {
		return nil, false, err
	}
	s.printf("resolved %s: %d packages", def.Name, len(pkgs))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, false, fmt.Errorf("creating the resolved lists' directory: %w", err)
	}
	data := append([]byte("request "+req+"\n"), packageList(pkgs)...)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return nil, false, fmt.Errorf("writing the resolved list: %w", err)
	}
	return pkgs, false, nil
}

// readPinned returns the packages listed at path if the file answers req and is younger
// than MaxAge.
func (s *session) readPinned(path, req string) ([]Package, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, false
	}
	maxAge, now := s.MaxAge, time.Now
	if maxAge == 0 {
		maxAge = DefaultMaxAge
	}
	if s.Now != nil {
		now = s.Now
	}
	if now().Sub(fi.ModTime()) > maxAge {
		return nil, false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	if string(first) != "request "+req {
		return nil, false
	}
	pkgs, err := parsePackageList(rest)
	if err != nil || len(pkgs) == 0 {
		return nil, false
	}
	return pkgs, true
}

// pinRequest hashes what a resolution depends on besides apt's lists: the top-level and
// excluded packages, and the parent's packages.
func pinRequest(def runtime.Image, parent *built) string {
	h := sha256.New()
	fmt.Fprintf(h, "packages %q\nexclude %q\n", allPackages(def), allExcluded(def))
	if parent != nil {
		h.Write(packageList(parent.pkgs))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// parsePackageList parses lines of name:arch=version, as packageList writes them.
func parsePackageList(data []byte) ([]Package, error) {
	var pkgs []Package
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		name, rest, ok1 := strings.Cut(line, ":")
		arch, version, ok2 := strings.Cut(rest, "=")
		if !ok1 || !ok2 || name == "" || arch == "" || version == "" {
			return nil, fmt.Errorf("malformed package line %q", line)
		}
		pkgs = append(pkgs, Package{Name: name, Version: version, Arch: arch})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading a package list: %w", err)
	}
	return pkgs, nil
}

// without returns the packages of pkgs that base does not hold at the same version.
func without(pkgs, base []Package) []Package {
	have := map[Package]bool{}
	for _, p := range base {
		have[p] = true
	}
	var out []Package
	for _, p := range pkgs {
		if !have[p] {
			out = append(out, p)
		}
	}
	return out
}
