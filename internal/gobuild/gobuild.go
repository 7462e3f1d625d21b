// Package gobuild runs the go command to build binaries, printing short
// progress lines instead of the package list.
package gobuild

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofrs/flock"
)

// majorSuffix is a module path's major version element, v2 and up.
var majorSuffix = regexp.MustCompile(`^v[2-9][0-9]*$`)

// ProgressInterval is how often Run prints a progress line.
const ProgressInterval = 20 * time.Second

// Run runs cmd, a `go build -v`, and prints a line to out with the number
// of packages compiled so far every ProgressInterval. On failure the error
// carries the last lines the go command printed.
func Run(cmd *exec.Cmd, name string, out io.Writer) error {
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	var compiled atomic.Int64
	var tail []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			compiled.Add(1)
			tail = append(tail, sc.Text())
			if len(tail) > 40 {
				tail = tail[1:]
			}
		}
	}()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	ticker := time.NewTicker(ProgressInterval)
	defer ticker.Stop()
	waitErr := make(chan error, 1)
	go func() { <-done; waitErr <- cmd.Wait() }()
	for {
		select {
		case err := <-waitErr:
			if err != nil {
				return fmt.Errorf("%w:\n%s", err, strings.Join(tail, "\n"))
			}
			return nil
		case <-ticker.C:
			fmt.Fprintf(out, "  %s: %d packages compiled, %s elapsed\n",
				name, compiled.Load(), time.Since(start).Round(time.Second))
		}
	}
}

// Lock takes an exclusive lock on the file at path (created if missing),
// waiting for it, so that concurrent builds into one directory take turns.
// The returned function releases it.
func Lock(path string) (func(), error) {
	l := flock.New(path)
	if err := l.Lock(); err != nil {
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() { _ = l.Unlock() }, nil
}

// Install builds the command pkg of module version with `go install` into
// cacheDir/bin/NAME-VERSION, NAME being pkg's last element before any major
// version suffix (as go install names it), once, and returns its path. A build
// cut short leaves no binary behind.
func Install(cacheDir, pkg, version string, out io.Writer) (string, error) {
	name := path.Base(pkg)
	if majorSuffix.MatchString(name) {
		name = path.Base(path.Dir(pkg))
	}
	dir := filepath.Join(cacheDir, "bin", name+"-"+version)
	bin := filepath.Join(dir, name)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	fmt.Fprintf(out, "building %s %s into %s (once)\n", name, version, dir)
	err := buildInto(cacheDir, dir, func(tmp string) error {
		cmd := exec.Command("go", "install", "-v", pkg+"@"+version)
		cmd.Env = append(os.Environ(), "GOBIN="+tmp)
		cmd.Dir = tmp
		if err := Run(cmd, name+" "+version, out); err != nil {
			return fmt.Errorf("building %s %s: %w", name, version, err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return bin, nil
}

// buildInto runs build on a new directory beside dir, under cacheDir/bin, and renames it to dir
// once build succeeded; another build that got there first wins. A build cut short leaves no
// directory behind.
func buildInto(cacheDir, dir string, build func(tmp string) error) error {
	if err := os.MkdirAll(filepath.Join(cacheDir, "bin"), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Join(cacheDir, "bin"), "."+filepath.Base(dir)+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := build(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(dir); statErr != nil {
			return err
		}
	}
	return nil
}

// BuildModule builds the commands pkgs (relative to the module's root, as ./cmd/x) of module at
// version, statically, into cacheDir/bin/NAME-VERSION (NAME: the module path's last element),
// once, and returns that directory; each binary is named after its package's last element. It
// builds inside the module as downloaded, with its own go.mod and go.sum, where `go install
// pkg@version` cannot be used (a module proxy that refuses the module's version list).
func BuildModule(cacheDir, module, version string, pkgs, tags []string, out io.Writer) (string, error) {
	name := path.Base(module)
	dir := filepath.Join(cacheDir, "bin", name+"-"+version)
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	fmt.Fprintf(out, "building %s %s (%s) into %s (once)\n", name, version, strings.Join(pkgs, ", "), dir)
	modDir, err := ModuleDir(module, version)
	if err != nil {
		return "", err
	}
	err = buildInto(cacheDir, dir, func(tmp string) error {
		args := []string{"build", "-v", "-trimpath", "-ldflags", "-s -w", "-o", tmp + string(filepath.Separator)}
		if len(tags) > 0 {
			args = append(args, "-tags", strings.Join(tags, ","))
		}
		cmd := exec.Command("go", append(args, pkgs...)...)
		cmd.Dir = modDir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
		if err := Run(cmd, name+" "+version, out); err != nil {
			return fmt.Errorf("building %s %s: %w", name, version, err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return dir, nil
}

// ModuleDir downloads module at version with the go command, once, and returns its directory in
// the module cache (read-only).
func ModuleDir(module, version string) (string, error) {
	data, err := exec.Command("go", "mod", "download", "-json", module+"@"+version).Output()
	if err != nil {
		return "", fmt.Errorf("downloading %s %s: %w: %s", module, version, err, exitStderr(err))
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(data, &mod); err != nil || mod.Dir == "" {
		return "", fmt.Errorf("downloading %s %s: no module directory in %s", module, version, data)
	}
	return mod.Dir, nil
}

// exitStderr is what a command that failed with err printed on its standard error.
func exitStderr(err error) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return strings.TrimSpace(string(exit.Stderr))
	}
	return ""
}
