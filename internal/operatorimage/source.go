// Package operatorimage builds the operator's container image without a
// daemon, with go-containerregistry. The image holds static caravan binaries
// cross-compiled from Caravan's source tree, on a minimal non-root
// filesystem, as an OCI index for several platforms.
package operatorimage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/caravan-dev/caravan/internal/gobuild"
)

// ModulePath is Caravan's Go module, whose source tree the image is built from.
const ModulePath = "github.com/caravan-dev/caravan"

// Command is the package of the image's binary: the operator and its
// version, none of the CLI's other commands.
const Command = "./cmd/caravan-operator"

// Platforms are the platforms the image is built for by default.
var Platforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}

// Source is a Caravan source tree and what to stamp into its build.
type Source struct {
	// Dir is the root of the tree (where go.mod is).
	Dir string
	// Version is stamped into the binary and the image label; "dev" when empty.
	Version string
	// Revision is the tree's git commit, with "-dirty" when it has changes; "" outside git.
	Revision string
	// OperatorImage, when set, is stamped into the binary as the operator image it installs by
	// default (a release's, by digest).
	OperatorImage string
}

// FindSource walks up from dir to the root of Caravan's source tree, and
// reads its git revision.
func FindSource(ctx context.Context, dir string) (Source, error) {
	start, err := filepath.Abs(dir)
	if err != nil {
		return Source{}, err
	}
	for d := start; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && moduleOf(data) == ModulePath {
			return Source{Dir: d, Revision: revision(ctx, d)}, nil
		}
		if filepath.Dir(d) == d {
			return Source{}, fmt.Errorf("no Caravan source tree (go.mod of module %s) in %s or above it: the operator image is built from the source; run from a checkout, or pass an image that was pushed already", ModulePath, start)
		}
	}
}

// moduleOf returns the module path a go.mod declares.
func moduleOf(gomod []byte) string {
	for line := range strings.SplitSeq(string(gomod), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// revision returns the commit of the git tree at dir, "-dirty" appended
// when it has uncommitted changes, or "" when dir is not in a git tree.
func revision(ctx context.Context, dir string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	rev := strings.TrimSpace(string(out))
	status, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
	if err == nil && len(bytes.TrimSpace(status)) > 0 {
		rev += "-dirty"
	}
	return rev
}

func (s Source) version() string {
	if s.Version == "" {
		return "dev"
	}
	return s.Version
}

// Build compiles the static operator binary (Command) for platform into outDir and
// returns its path. The go command skips the link when the binary there is
// up to date, so a rebuild of an unchanged tree takes seconds.
func (s Source) Build(ctx context.Context, p v1.Platform, outDir string, progress io.Writer) (string, error) {
	if p.OS != "linux" {
		return "", fmt.Errorf("platform %s: the operator image is built for linux only", p.String())
	}
	return s.BuildCommand(ctx, Command, p, outDir, progress)
}

// BuildCommand compiles the static binary of the package pkg (as ./cmd/caravan) for platform,
// stamped with the source's version, into outDir/<os>-<arch>[-variant]/caravan and returns its path.
func (s Source) BuildCommand(ctx context.Context, pkg string, p v1.Platform, outDir string, progress io.Writer) (string, error) {
	dir := filepath.Join(outDir, p.OS+"-"+p.Architecture+platformVariant(p))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	bin := filepath.Join(dir, "caravan")
	ldflags := "-s -w -X " + ModulePath + "/internal/version.Version=" + s.version()
	if s.OperatorImage != "" {
		ldflags += " -X " + ModulePath + "/internal/version.OperatorImage=" + s.OperatorImage
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-v", "-trimpath",
		"-ldflags", ldflags, "-o", bin, pkg)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture, "GOWORK=off", "GOFLAGS=")
	if p.Architecture == "arm" && p.Variant != "" {
		cmd.Env = append(cmd.Env, "GOARM="+strings.TrimPrefix(p.Variant, "v"))
	}
	if err := gobuild.Run(cmd, pkg+" "+p.String(), progress); err != nil {
		return "", fmt.Errorf("building %s for %s: %w", pkg, p.String(), err)
	}
	return bin, nil
}

func platformVariant(p v1.Platform) string {
	if p.Variant == "" {
		return ""
	}
	return "-" + p.Variant
}

// PlatformNames are the platforms as os/arch[/variant], ParsePlatforms' form.
func PlatformNames(ps []v1.Platform) []string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.String()
	}
	return names
}

// ParsePlatforms parses a list of os/arch[/variant].
func ParsePlatforms(list []string) ([]v1.Platform, error) {
	var out []v1.Platform
	var errs []error
	for _, s := range list {
		p, err := v1.ParsePlatform(s)
		if err != nil || p.OS == "" || p.Architecture == "" {
			errs = append(errs, fmt.Errorf("platform %q is not os/arch[/variant] (for example linux/amd64)", s))
			continue
		}
		out = append(out, *p)
	}
	return out, errors.Join(errs...)
}
