package localcluster

import (
	"context"
	"embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/caravan-dev/caravan/internal/debimage"
	"github.com/caravan-dev/caravan/internal/gobuild"
)

// Versions of the local-cluster components. A change of version changes
// the cache directory, so binaries of an older version are never reused.
const (
	KubernetesVersion = "v1.37.2"
	EtcdVersion       = "v3.7.0"
	KwokVersion       = "v0.8.0"
	// RegistryVersion is distribution's registry, the OCI registry that
	// Debian's docker-registry package also ships.
	RegistryVersion = "v3.1.2"
	// ContainerdVersion is the kubelet node's container runtime, built with the CNI plugins
	// of CNIPluginsVersion.
	ContainerdVersion = "v2.4.2"
	CNIPluginsVersion = "v1.10.0"
	RuncVersion       = "v1.5.3"
	// PauseVersion is the version of the kubelet node's pause image, built from toolsrc/pause.
	PauseVersion = "1"
	// CoreDNSVersion is the kubelet node's cluster DNS, built from toolsrc/coredns.
	CoreDNSVersion = "v1.15.0"
	// NftablesVersion names the recipe of the nft tool taken from Debian's packages, which
	// kube-proxy's nftables mode runs.
	NftablesVersion = "debian-1"
)

// RegistryBinaryEnv names a registry executable to run instead of the one
// built into the cache.
const RegistryBinaryEnv = "CARAVAN_REGISTRY_BIN"

// toolSources holds the tools modules that build the local-cluster
// binaries. They are separate modules (their go.mod is stored as go.mod.txt
// so that it stays out of Caravan's own module) and are written to the
// cache before building, so that a caravan binary can build them anywhere
// Go is installed.
//
//go:embed toolsrc
var toolSources embed.FS

// kwokStages are the kwok stage files, read from the kwok module at build
// time, that make nodes Ready (with lease heartbeats) and pods Running.
var kwokStages = []string{
	"kustomize/stage/node/fast/node-initialize.yaml",
	"kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
	"kustomize/stage/pod/fast/pod-ready.yaml",
	"kustomize/stage/pod/fast/pod-complete.yaml",
	"kustomize/stage/pod/fast/pod-delete.yaml",
}

// Binaries are the paths of the local-cluster executables.
type Binaries struct {
	APIServer         string
	ControllerManager string
	Scheduler         string
	Kubectl           string
	Etcd              string
	Kwok              string
	// KwokStages is the kwok configuration file holding the stages.
	KwokStages string
	// Registry is the OCI registry that serves the cluster's images.
	Registry string
}

// component is one tools module and what it builds.
type component struct {
	name string // the cache directory's name, and the tools module's unless module is set
	// module is the tools module directory under toolsrc, when it is not name.
	module  string
	version string
	// packages are the module's packages to build, with `go build -o <dir>/`;
	// "." is the module's main package.
	packages []string
	// outputs are the files the build leaves in the directory.
	outputs []string
	// ldflags are passed to the linker, as the component's own release
	// build passes them (its version, mostly).
	ldflags []string
	// after runs in the source directory once the build succeeded, with the
	// output directory as argument.
	after func(ctx context.Context, srcDir, outDir string) error
	// note says, in the build's first line, what the build is for.
	note string
	// env is added to the go command's environment (CGO_ENABLED=0 for a static binary).
	env []string
	// tags are the build tags.
	tags []string
	// prepare runs before the build and returns more of its environment: where the C
	// libraries a cgo build links are, say.
	prepare func(ctx context.Context, cacheDir string, out io.Writer) ([]string, error)
	// debs are Debian packages unpacked, without their dependencies, into the component's
	// directory instead of a Go build (packages is then empty).
	debs []string
}

// recipeFile records, in a component's cache directory, how it was built;
// a cached build of another recipe is built again.
const recipeFile = "recipe.txt"

// recipe is what decides a build's result besides the version: the
// packages and the linker flags.
func (c component) recipe() string {
	recipe := strings.Join(c.packages, " ") + "\nldflags: " + strings.Join(c.ldflags, " ") + "\n"
	if len(c.env) > 0 {
		recipe += "env: " + strings.Join(c.env, " ") + "\n"
	}
	if len(c.tags) > 0 {
		recipe += "tags: " + strings.Join(c.tags, ",") + "\n"
	}
	if len(c.debs) > 0 {
		recipe += "debs: " + strings.Join(c.debs, " ") + "\n"
	}
	return recipe
}

func components() []component {
	return []component{
		{
			name:    "kube",
			version: KubernetesVersion,
			packages: []string{
				"k8s.io/kubernetes/cmd/kube-apiserver",
				"k8s.io/kubernetes/cmd/kube-controller-manager",
				"k8s.io/kubernetes/cmd/kube-scheduler",
				"k8s.io/kubernetes/cmd/kubectl",
			},
			outputs: []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl"},
			ldflags: kubeVersionFlags(KubernetesVersion),
		},
		{name: "etcd", version: EtcdVersion, packages: []string{"."}, outputs: []string{"etcd"}},
		{
			name:     "kwok",
			version:  KwokVersion,
			packages: []string{"sigs.k8s.io/kwok/cmd/kwok"},
			outputs:  []string{"kwok", "stages.yaml"},
			after:    writeKwokStages,
		},
		{
			name:     "registry",
			version:  RegistryVersion,
			packages: []string{"github.com/distribution/distribution/v3/cmd/registry"},
			outputs:  []string{"registry"},
			ldflags:  []string{"-X github.com/distribution/distribution/v3/version.version=" + RegistryVersion},
		},
	}
}

// kubeVersionFlags stamp the version into Kubernetes' binaries, as its
// release build does, so that servers and kubectl report it.
func kubeVersionFlags(version string) []string {
	major, minor, _ := strings.Cut(strings.TrimPrefix(version, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	var flags []string
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		flags = append(flags,
			"-X "+pkg+".gitVersion="+version,
			"-X "+pkg+".gitMajor="+major,
			"-X "+pkg+".gitMinor="+minor,
			"-X "+pkg+".gitTreeState=clean",
			"-X "+pkg+".gitCommit=")
	}
	return flags
}

// DefaultCacheDir is where built binaries are kept: $CARAVAN_CACHE_DIR, or
// caravan/ under the user's cache directory.
func DefaultCacheDir() (string, error) {
	if dir := os.Getenv("CARAVAN_CACHE_DIR"); dir != "" {
		return dir, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user cache directory (set CARAVAN_CACHE_DIR): %w", err)
	}
	return filepath.Join(base, "caravan"), nil
}

func (c component) dir(cacheDir string) string {
	return filepath.Join(cacheDir, "bin", c.name+"-"+c.version)
}

// overridden reports whether the environment names an executable to use
// instead of this component's build.
func (c component) overridden() bool {
	return c.name == "registry" && os.Getenv(RegistryBinaryEnv) != ""
}

func (c component) present(cacheDir string) bool {
	recipe, err := os.ReadFile(filepath.Join(c.dir(cacheDir), recipeFile))
	if err != nil || string(recipe) != c.recipe() {
		return false
	}
	for _, out := range c.outputs {
		if _, err := os.Stat(filepath.Join(c.dir(cacheDir), out)); err != nil {
			return false
		}
	}
	return true
}

// FindBinaries returns the cached binaries, and the names of the components
// that are not built yet.
func FindBinaries(cacheDir string) (Binaries, []string) {
	var missing []string
	for _, c := range components() {
		if !c.overridden() && !c.present(cacheDir) {
			missing = append(missing, c.name+" "+c.version)
		}
	}
	kube := components()[0].dir(cacheDir)
	kwok := components()[2].dir(cacheDir)
	registry := filepath.Join(components()[3].dir(cacheDir), "registry")
	if bin := os.Getenv(RegistryBinaryEnv); bin != "" {
		registry = bin
	}
	return Binaries{
		APIServer:         filepath.Join(kube, "kube-apiserver"),
		ControllerManager: filepath.Join(kube, "kube-controller-manager"),
		Scheduler:         filepath.Join(kube, "kube-scheduler"),
		Kubectl:           filepath.Join(kube, "kubectl"),
		Etcd:              filepath.Join(components()[1].dir(cacheDir), "etcd"),
		Kwok:              filepath.Join(kwok, "kwok"),
		KwokStages:        filepath.Join(kwok, "stages.yaml"),
		Registry:          registry,
	}, missing
}

// EnsureBinaries builds the components missing from the cache and returns
// the paths of all binaries. Progress goes to out. Concurrent callers (for
// example several test binaries) wait for each other on a lock file, so
// each component is built once.
func EnsureBinaries(ctx context.Context, cacheDir string, out io.Writer) (Binaries, error) {
	if err := ensure(ctx, cacheDir, out, components()); err != nil {
		return Binaries{}, err
	}
	bins, missing := FindBinaries(cacheDir)
	if len(missing) > 0 {
		return Binaries{}, fmt.Errorf("binaries still missing after build: %s", strings.Join(missing, ", "))
	}
	return bins, nil
}

// EnsureRegistry builds the registry alone when the cache lacks it, and
// returns its path: for tests and benches that need no cluster.
func EnsureRegistry(ctx context.Context, cacheDir string, out io.Writer) (string, error) {
	if err := ensure(ctx, cacheDir, out, components()[3:4]); err != nil {
		return "", err
	}
	bins, _ := FindBinaries(cacheDir)
	return bins.Registry, nil
}

// ensure builds those of comps that the cache lacks, under the cache's lock.
func ensure(ctx context.Context, cacheDir string, out io.Writer, comps []component) error {
	var todo []component
	for _, c := range comps {
		if !c.overridden() && !c.present(cacheDir) {
			todo = append(todo, c)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return fmt.Errorf("creating cache directory: %w", err)
	}
	unlock, err := gobuild.Lock(filepath.Join(cacheDir, "build.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	for _, c := range todo {
		// Another process may have built it while this one waited.
		if c.present(cacheDir) {
			continue
		}
		if err := c.build(ctx, cacheDir, out); err != nil {
			return err
		}
	}
	return nil
}

// build writes the tools module to the cache, builds it into a temporary
// directory and renames that into place, so a cache entry is either
// complete or absent.
func (c component) build(ctx context.Context, cacheDir string, out io.Writer) error {
	srcDir := filepath.Join(cacheDir, "src", c.name+"-"+c.version)
	if len(c.debs) == 0 {
		if err := writeToolSource(c.moduleName(), srcDir); err != nil {
			return err
		}
	}
	tmpDir := c.dir(cacheDir) + ".partial"
	if err := os.RemoveAll(tmpDir); err != nil {
		return fmt.Errorf("cleaning %s: %w", tmpDir, err)
	}
	if err := os.MkdirAll(tmpDir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", tmpDir, err)
	}
	note := "a cold build takes several minutes"
	if c.note != "" {
		note = c.note + "; " + note
	}
	fmt.Fprintf(out, "building %s %s (%s) into %s; %s\n",
		c.name, c.version, strings.Join(c.outputs, ", "), c.dir(cacheDir), note)
	if err := c.compile(ctx, cacheDir, srcDir, tmpDir, out); err != nil {
		return err
	}
	if c.after != nil {
		if err := c.after(ctx, srcDir, tmpDir); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(tmpDir, recipeFile), []byte(c.recipe()), 0o644); err != nil {
		return err
	}
	if err := os.RemoveAll(c.dir(cacheDir)); err != nil {
		return err
	}
	if err := os.Rename(tmpDir, c.dir(cacheDir)); err != nil {
		return fmt.Errorf("installing %s: %w", c.name, err)
	}
	fmt.Fprintf(out, "built %s %s\n", c.name, c.version)
	return nil
}

// compile builds the component's packages into outDir, or unpacks its Debian packages there.
func (c component) compile(ctx context.Context, cacheDir, srcDir, outDir string, out io.Writer) error {
	if len(c.debs) > 0 {
		_, err := debimage.Options{CacheDir: debimage.CacheDir(cacheDir), Progress: out}.Extract(ctx, c.debs, outDir)
		if err != nil {
			return fmt.Errorf("unpacking %s for %s: %w", strings.Join(c.debs, ", "), c.name, err)
		}
		return nil
	}
	env := append(append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly -buildvcs=false"), c.env...)
	if c.prepare != nil {
		more, err := c.prepare(ctx, cacheDir, out)
		if err != nil {
			return fmt.Errorf("preparing the build of %s %s: %w", c.name, c.version, err)
		}
		env = append(env, more...)
	}
	args := []string{"build", "-v", "-o", outDir + string(filepath.Separator)}
	if len(c.ldflags) > 0 {
		args = append(args, "-ldflags", strings.Join(c.ldflags, " "))
	}
	if len(c.tags) > 0 {
		args = append(args, "-tags", strings.Join(c.tags, ","))
	}
	args = append(args, c.packages...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = srcDir
	cmd.Env = env
	if err := gobuild.Run(cmd, c.name, out); err != nil {
		return fmt.Errorf("building %s %s: %w", c.name, c.version, err)
	}
	return nil
}

// moduleName is the directory of the component's tools module under toolsrc.
func (c component) moduleName() string {
	if c.module != "" {
		return c.module
	}
	return c.name
}

func writeToolSource(name, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	entries, err := toolSources.ReadDir("toolsrc/" + name)
	if err != nil {
		return fmt.Errorf("reading embedded tools module %s: %w", name, err)
	}
	for _, e := range entries {
		data, err := toolSources.ReadFile("toolsrc/" + name + "/" + e.Name())
		if err != nil {
			return err
		}
		target := filepath.Join(dir, strings.TrimSuffix(e.Name(), ".txt"))
		if err := os.WriteFile(target, data, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", target, err)
		}
	}
	return nil
}

// moduleDir returns where the go command keeps module's source, as the
// tools module in srcDir requires it.
func moduleDir(ctx context.Context, srcDir, module string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", module)
	cmd.Dir = srcDir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	dirOut, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating the module %s: %w", module, err)
	}
	dir := strings.TrimSpace(string(dirOut))
	if dir == "" {
		return "", fmt.Errorf("locating the module %s: empty directory", module)
	}
	return dir, nil
}

func writeKwokStages(ctx context.Context, srcDir, outDir string) error {
	moduleDir, err := moduleDir(ctx, srcDir, "sigs.k8s.io/kwok")
	if err != nil {
		return err
	}
	var docs []string
	for _, stage := range kwokStages {
		data, err := os.ReadFile(filepath.Join(moduleDir, stage))
		if err != nil {
			return fmt.Errorf("reading kwok stage: %w", err)
		}
		docs = append(docs, strings.TrimSpace(string(data)))
	}
	return os.WriteFile(filepath.Join(outDir, "stages.yaml"), []byte(strings.Join(docs, "\n---\n")+"\n"), 0o644)
}
