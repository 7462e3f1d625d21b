package localcluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/caravan-dev/caravan/internal/debimage"
)

// NodeBinaries are the executables of the kubelet node.
type NodeBinaries struct {
	Kubelet   string
	KubeProxy string
	// Containerd is the container runtime; its directory also holds its runc shim and the
	// CNI plugins, and is on its PATH.
	Containerd string
	Runc       string
	// Pause is the static program of the pod sandbox image.
	Pause string
	// Nft is Debian's nft, which kube-proxy runs; NftLibraries holds the libraries it needs
	// beyond the machine's own.
	Nft          string
	NftLibraries string
	// CoreDNS serves the cluster's DNS.
	CoreDNS string
}

// nodeComponents are the components of the kubelet node, built only for it.
func nodeComponents() []component {
	return []component{
		{
			name: "kubelet", version: KubernetesVersion,
			packages: []string{"k8s.io/kubernetes/cmd/kubelet", "k8s.io/kubernetes/cmd/kube-proxy"},
			outputs:  []string{"kubelet", "kube-proxy"},
			ldflags:  kubeVersionFlags(KubernetesVersion),
			env:      []string{"CGO_ENABLED=0"},
			note:     "the kubelet node's kubelet and kube-proxy",
		},
		{
			name: "containerd", version: ContainerdVersion + "-cni-" + CNIPluginsVersion,
			packages: []string{
				"github.com/containerd/containerd/v2/cmd/containerd",
				"github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2",
				"github.com/containernetworking/plugins/plugins/main/bridge",
				"github.com/containernetworking/plugins/plugins/ipam/host-local",
				"github.com/containernetworking/plugins/plugins/meta/portmap",
			},
			outputs: []string{"containerd", "containerd-shim-runc-v2", "bridge", "host-local", "portmap"},
			ldflags: []string{"-X github.com/containerd/containerd/v2/version.Version=" + ContainerdVersion},
			env:     []string{"CGO_ENABLED=0"},
			note:    "the kubelet node's container runtime and network plugins",
		},
		{
			// runc is a cgo program; it filters system calls with libseccomp, linked statically
			// from Debian's libseccomp-dev, so that it needs only the C library at run time.
			name: "runc", module: "containerd", version: RuncVersion,
			packages: []string{"github.com/opencontainers/runc"},
			outputs:  []string{"runc"},
			env:      []string{"CGO_ENABLED=1"},
			tags:     []string{"seccomp"},
			prepare:  prepareLibseccomp,
			note:     "the kubelet node's OCI runtime, with seccomp",
		},
		{
			name: "pause", version: PauseVersion, packages: []string{"."}, outputs: []string{"pause"},
			ldflags: []string{"-s"}, env: []string{"CGO_ENABLED=0"},
			note: "the program that holds a pod's namespaces",
		},
		{
			// CoreDNS with only the plugins the cluster DNS uses (toolsrc/coredns), as its docs
			// build a smaller server.
			name: "coredns", version: CoreDNSVersion, packages: []string{"."}, outputs: []string{"coredns"},
			ldflags: []string{"-s", "-w"}, env: []string{"CGO_ENABLED=0"},
			note: "the kubelet node's cluster DNS",
		},
		{
			// kube-proxy's nftables mode runs nft, which no Go module provides.
			name: "nftables", version: NftablesVersion,
			debs:    []string{"nftables", "libnftables1", "libnftnl11"},
			outputs: []string{"usr/sbin/nft"},
			note:    "nft from Debian's packages, for kube-proxy",
		},
	}
}

// nodeComponent returns the node component called name.
func nodeComponent(name string) component {
	for _, c := range nodeComponents() {
		if c.name == name {
			return c
		}
	}
	panic("no node component " + name)
}

// FindNodeBinaries returns the kubelet node's cached binaries, and the components not built yet.
func FindNodeBinaries(cacheDir string) (NodeBinaries, []string) {
	var missing []string
	for _, c := range nodeComponents() {
		if !c.present(cacheDir) {
			missing = append(missing, c.name+" "+c.version)
		}
	}
	dir := func(name string) string { return nodeComponent(name).dir(cacheDir) }
	return NodeBinaries{
		Kubelet:      filepath.Join(dir("kubelet"), "kubelet"),
		KubeProxy:    filepath.Join(dir("kubelet"), "kube-proxy"),
		Containerd:   filepath.Join(dir("containerd"), "containerd"),
		Runc:         filepath.Join(dir("runc"), "runc"),
		Pause:        filepath.Join(dir("pause"), "pause"),
		Nft:          filepath.Join(dir("nftables"), "usr", "sbin", "nft"),
		NftLibraries: filepath.Join(dir("nftables"), "usr", "lib", debianLibDir()),
		CoreDNS:      filepath.Join(dir("coredns"), "coredns"),
	}, missing
}

// EnsureNodeBinaries builds the kubelet node's components that the cache lacks, and returns
// the paths of its binaries.
func EnsureNodeBinaries(ctx context.Context, cacheDir string, out io.Writer) (NodeBinaries, error) {
	if err := ensure(ctx, cacheDir, out, nodeComponents()); err != nil {
		return NodeBinaries{}, err
	}
	bins, missing := FindNodeBinaries(cacheDir)
	if len(missing) > 0 {
		return NodeBinaries{}, fmt.Errorf("node binaries still missing after build: %s", strings.Join(missing, ", "))
	}
	return bins, nil
}

// debianLibDir is the multiarch directory of this machine's libraries, as Debian names it.
func debianLibDir() string {
	if arch, ok := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}[runtime.GOARCH]; ok {
		return arch
	}
	return runtime.GOARCH + "-linux-gnu"
}

// prepareLibseccomp unpacks Debian's libseccomp-dev into the cache and returns the
// environment under which cgo finds it: a pkg-config file that links its static library.
func prepareLibseccomp(ctx context.Context, cacheDir string, out io.Writer) ([]string, error) {
	if _, err := exec.LookPath("pkg-config"); err != nil {
		return nil, fmt.Errorf("runc's seccomp build finds libseccomp with pkg-config, which is not installed: %w", err)
	}
	root := filepath.Join(cacheDir, "src", "libseccomp")
	if err := os.RemoveAll(root); err != nil {
		return nil, err
	}
	pkgs, err := debimage.Options{CacheDir: debimage.CacheDir(cacheDir), Progress: out}.Extract(ctx, []string{"libseccomp-dev"}, root)
	if err != nil {
		return nil, err
	}
	lib := filepath.Join(root, "usr", "lib", debianLibDir(), "libseccomp.a")
	if _, err := os.Stat(lib); err != nil {
		return nil, fmt.Errorf("libseccomp-dev holds no static library: %w", err)
	}
	version, _, _ := strings.Cut(pkgs[0].Version, "-")
	pc := fmt.Sprintf("Name: libseccomp\nDescription: libseccomp from Debian's libseccomp-dev, linked statically\n"+
		"Version: %s\nCflags: -I%s\nLibs: %s\n", version, filepath.Join(root, "usr", "include"), lib)
	if err := os.WriteFile(filepath.Join(root, "libseccomp.pc"), []byte(pc), 0o644); err != nil {
		return nil, err
	}
	return []string{"PKG_CONFIG_PATH=" + root}, nil
}
