package localcluster

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	kubeproxyconfig "k8s.io/kube-proxy/config/v1alpha1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/caravan-dev/caravan/internal/procnode"
)

// The kubelet node and its network: a bridge of the machine, whose address is the node's and
// where the API server and the registry listen, so that pods reach them.
const (
	// KubeletNodeName is the kubelet node's name.
	KubeletNodeName = "caravan-kubelet-node"
	// NodeBridge is the bridge that the pods' interfaces join.
	NodeBridge = "caravan0"
	// NodeAddress is the bridge's address on the machine: the node's and the pods' gateway.
	NodeAddress = "10.88.0.1"
	// PodCIDR is the range of the pods' addresses.
	PodCIDR = "10.88.0.0/24"
	// KubeletServiceCIDR is the range of Service addresses, which kube-proxy serves.
	KubeletServiceCIDR       = "10.96.0.0/16"
	kubernetesServiceAddress = "10.96.0.1"
	// networkName is the CNI network's name.
	networkName = "caravan"
)

// nodeDir is the path of parts under the kubelet node's directory.
func (c *Cluster) nodeDir(parts ...string) string {
	return filepath.Join(append([]string{c.Dir, "kubelet-node"}, parts...)...)
}

// kubeletNodeOwner records, for the whole machine, the directory of the cluster whose kubelet
// node runs: the bridge, the kubelet's cgroups and kube-proxy's tables are the machine's, so
// one kubelet node runs at a time.
var kubeletNodeOwner = filepath.Join(os.TempDir(), "caravan-kubelet-node")

// claimKubeletNode records this cluster as the machine's kubelet node, refusing while another
// cluster's runs, and cleaning up after one whose processes died without a stop.
func (c *Cluster) claimKubeletNode() error {
	if data, err := os.ReadFile(kubeletNodeOwner); err == nil {
		dir := strings.TrimSpace(string(data))
		if other, err := Load(dir); err == nil && dir != c.Dir {
			if other.AnyAlive() {
				return fmt.Errorf("the local cluster in %s runs this machine's kubelet node, and a machine has one; "+
					"stop it (caravan local down --dir %s) or use the process node", dir, dir)
			}
			if err := other.cleanKubeletNode(); err != nil {
				return fmt.Errorf("cleaning up after the kubelet node of the stopped cluster in %s: %w", dir, err)
			}
		}
	}
	return os.WriteFile(kubeletNodeOwner, []byte(c.Dir+"\n"), 0o644)
}

// WaitForKubeletNode takes the machine's turn at the kubelet node, for programs (test binaries)
// that start and stop their cluster within their own life, and returns the function that gives it
// back. While another such program has its turn it waits, saying so on out once. A cluster
// started by `caravan local up` outlives its command, so it takes no turn; Start refuses beside it.
func WaitForKubeletNode(ctx context.Context, out io.Writer) (func(), error) {
	l := flock.New(kubeletNodeOwner + ".turn")
	ok, err := l.TryLock()
	if err != nil {
		return nil, fmt.Errorf("taking the kubelet node's turn: %w", err)
	}
	if !ok {
		fmt.Fprintf(out, "waiting for the kubelet node: another test run on this machine has it (lock %s)\n", l.Path())
		if ok, err = l.TryLockContext(ctx, time.Second); err != nil || !ok {
			return nil, fmt.Errorf("waiting for the kubelet node's turn: %w", err)
		}
	}
	return func() { _ = l.Unlock() }, nil
}

// ownsKubeletNode reports whether no other cluster is recorded as running the machine's kubelet
// node: what this cluster's stop cleans up is then its own.
func (c *Cluster) ownsKubeletNode() bool {
	data, err := os.ReadFile(kubeletNodeOwner)
	return err != nil || strings.TrimSpace(string(data)) == c.Dir
}

// startNodeNetwork creates the node's bridge with its address, and lets the machine forward
// between its interfaces, as Service traffic from pod to pod needs.
func (c *Cluster) startNodeNetwork(context.Context, Options) error {
	if os.Geteuid() != 0 {
		return errors.New("the kubelet node needs root (a bridge, network namespaces, cgroups); run as root, or use the process node")
	}
	if err := c.claimKubeletNode(); err != nil {
		return err
	}
	if err := createBridge(NodeBridge, NodeAddress); err != nil {
		return err
	}
	const forward = "/proc/sys/net/ipv4/ip_forward"
	if data, err := os.ReadFile(forward); err == nil && strings.TrimSpace(string(data)) == "1" {
		return nil
	}
	if err := os.WriteFile(forward, []byte("1"), 0o644); err != nil {
		return fmt.Errorf("letting the machine forward packets: %w", err)
	}
	return nil
}

// startKubeletNode starts containerd, the cluster DNS, the kubelet and kube-proxy, and waits
// until the node is Ready and schedulable.
func (c *Cluster) startKubeletNode(ctx context.Context, opts Options) error {
	pause, err := c.pushPauseImage(ctx, opts.NodeBinaries.Pause)
	if err != nil {
		return err
	}
	socket, err := c.startContainerd(ctx, opts, pause)
	if err != nil {
		return err
	}
	cs, err := c.adminClientset()
	if err != nil {
		return err
	}
	if err := c.startClusterDNS(ctx, cs, opts); err != nil {
		return err
	}
	kubelet, err := c.startKubelet(opts, socket)
	if err != nil {
		return err
	}
	if err := c.startKubeProxy(opts); err != nil {
		return err
	}
	if opts.NodeBinary != "" {
		if err := c.startProvisioner(ctx, cs, opts); err != nil {
			return err
		}
	}
	if err := applyPlacementPolicy(ctx, cs, c.RegistryAddress); err != nil {
		return err
	}
	if err := waitPlacementActs(ctx, cs); err != nil {
		return err
	}
	return waitSchedulable(ctx, cs, kubelet, KubeletNodeName, 120*time.Second)
}

// startProvisioner creates the cluster's default StorageClass and starts caravan local
// provisioner, which makes its claims directories that the kubelet mounts as hostPath volumes.
func (c *Cluster) startProvisioner(ctx context.Context, cs kubernetes.Interface, opts Options) error {
	if err := applyStorageClass(ctx, cs); err != nil {
		return err
	}
	kubeconfig := c.nodeDir("provisioner.kubeconfig")
	if err := c.WriteKubeconfig(kubeconfig, "caravan-local-provisioner", "system:masters"); err != nil {
		return err
	}
	args := []string{"local", "provisioner", "--node", KubeletNodeName, "--dir", c.nodeDir("volumes"), "--kubeconfig", kubeconfig}
	if opts.KeptVolumes != "" {
		args = append(args, "--kept-volumes", opts.KeptVolumes)
	}
	_, err := c.launch(opts, "provisioner", opts.NodeBinary, args)
	return err
}

// startContainerd writes containerd's configuration, with the CNI bridge network and the
// registry served over plain HTTP, starts it and returns its socket once it listens.
func (c *Cluster) startContainerd(ctx context.Context, opts Options, pause string) (string, error) {
	bins := opts.NodeBinaries
	binDir := filepath.Dir(bins.Containerd)
	socket := c.nodeDir("containerd.sock")
	if err := c.PullOverPlainHTTP(c.RegistryAddress); err != nil {
		return "", err
	}
	cniConf := c.nodeDir("cni", "net.d")
	if err := os.MkdirAll(cniConf, 0o755); err != nil {
		return "", err
	}
	files := map[string]string{
		filepath.Join(cniConf, "10-caravan.conflist"): cniNetwork(c.nodeDir("cni", "ipam")),
		c.nodeDir("containerd.toml"):                  containerdConfig(c.nodeDir(), socket, binDir, bins.Runc, cniConf, pause),
	}
	for path, content := range files {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	// containerd finds its shim on PATH, and the bridge plugin, which it runs, nft.
	p, err := c.launchWith(opts, "containerd", bins.Containerd, []string{"--config", c.nodeDir("containerd.toml")},
		nftEnv(bins, binDir))
	if err != nil {
		return "", err
	}
	err = waitFor(ctx, p, 30*time.Second, func(context.Context) (bool, error) {
		conn, err := net.Dial("unix", socket)
		if err != nil {
			return false, err
		}
		return true, conn.Close()
	})
	return socket, err
}

// PullOverPlainHTTP makes the kubelet node's containerd pull from the registry at address
// over plain HTTP (a hosts.toml in its certs.d): the cluster's own registry, or another on the
// machine. containerd reads it at the next pull. The process node needs nothing.
func (c *Cluster) PullOverPlainHTTP(address string) error {
	if c.Node != NodeKubelet {
		return nil
	}
	dir := c.nodeDir("certs.d", address)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	server := "http://" + address
	hosts := fmt.Sprintf("server = %q\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n", server, server)
	return os.WriteFile(filepath.Join(dir, "hosts.toml"), []byte(hosts), 0o644)
}

// containerdConfig is containerd's configuration: its state and the pods' network namespaces
// under dir, runc with cgroupfs, the CNI network in cniConf (the loopback set up by containerd
// itself), pause as the sandbox image, and registry hosts in dir/certs.d. oom_score_adj stays
// at containerd's own or above, as it must where the machine grants no CAP_SYS_RESOURCE.
func containerdConfig(dir, socket, binDir, runc, cniConf, pause string) string {
	return fmt.Sprintf(`version = 3
root = %q
state = %q
[grpc]
  address = %q
[plugins."io.containerd.cri.v1.runtime"]
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = [%q]
    conf_dir = %q
    use_internal_loopback = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = %q
        SystemdCgroup = false
[plugins."io.containerd.cri.v1.images"]
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = %q
  [plugins."io.containerd.cri.v1.images".registry]
    config_path = %q
`, filepath.Join(dir, "containerd"), filepath.Join(dir, "containerd-state"), socket, binDir, cniConf, runc, pause,
		filepath.Join(dir, "certs.d"))
}

// cniNetwork is the CNI configuration of the pods' network: the node's bridge, which is their
// gateway, addresses of PodCIDR, recorded under ipamDir, and traffic to the rest of the world
// masqueraded as the machine's own (with nftables), as a node's pods reach a cluster's outside;
// containers' hostPorts are forwarded from the machine's addresses (portmap, with nftables).
func cniNetwork(ipamDir string) string {
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": %q,
  "plugins": [{
    "type": "bridge", "bridge": %q, "isGateway": true, "ipMasq": true, "ipMasqBackend": "nftables", "hairpinMode": true,
    "ipam": {"type": "host-local", "dataDir": %q, "ranges": [[{"subnet": %q, "gateway": %q}]],
             "routes": [{"dst": "0.0.0.0/0"}]}
  }, {
    "type": "portmap", "backend": "nftables", "capabilities": {"portMappings": true}
  }]
}
`, networkName, NodeBridge, ipamDir, PodCIDR, NodeAddress)
}

// startKubelet starts the kubelet on containerd's socket, registering the node with the
// process node's kind label, so that the pods the process node would run run here.
func (c *Cluster) startKubelet(opts Options, socket string) (*Process, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	serving, err := c.ca.sign(&x509.Certificate{
		Subject:     pkix.Name{CommonName: KubeletNodeName},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{KubeletNodeName},
		IPAddresses: []net.IP{net.ParseIP(NodeAddress)},
	})
	if err != nil {
		return nil, err
	}
	kubeconfig := c.nodeDir("kubelet.kubeconfig")
	if err := c.WriteKubeconfig(kubeconfig, "system:node:"+KubeletNodeName, "system:nodes"); err != nil {
		return nil, err
	}
	cfg := kubeletConfiguration(c.nodeDir(), socket, c.pki("ca.crt"), int32(port), podResolvConf())
	files := map[string][]byte{
		c.nodeDir("kubelet.crt"): serving.CertPEM, c.nodeDir("kubelet.key"): serving.KeyPEM,
		c.nodeDir("kubelet.yaml"): cfg,
	}
	for path, content := range files {
		if err := os.WriteFile(path, content, 0o600); err != nil {
			return nil, err
		}
	}
	return c.launch(opts, "kubelet", opts.NodeBinaries.Kubelet, []string{
		"--config=" + c.nodeDir("kubelet.yaml"),
		"--kubeconfig=" + kubeconfig,
		"--root-dir=" + c.nodeDir("kubelet"),
		"--hostname-override=" + KubeletNodeName,
		"--node-ip=" + NodeAddress,
		"--node-labels=" + procnode.KindLabel + "=" + procnode.KindProcess,
	})
}

// kubeletConfiguration is the kubelet's configuration: cgroupfs on the machine's cgroups (v1
// allowed), webhook authentication and authorization, logs and state under dir, and no
// eviction for the machine's disk, which the cluster does not own.
func kubeletConfiguration(dir, socket, clientCA string, port int32, resolvConf string) []byte {
	cfg := kubeletconfig.KubeletConfiguration{
		TypeMeta:                 metav1.TypeMeta{APIVersion: "kubelet.config.k8s.io/v1beta1", Kind: "KubeletConfiguration"},
		FailCgroupV1:             ptr.To(false),
		CgroupDriver:             "cgroupfs",
		ContainerRuntimeEndpoint: "unix://" + socket,
		ImageServiceEndpoint:     "unix://" + socket,
		Address:                  NodeAddress,
		Port:                     port,
		ReadOnlyPort:             0,
		HealthzPort:              ptr.To[int32](0),
		FailSwapOn:               ptr.To(false),
		ResolverConfig:           ptr.To(resolvConf),
		ClusterDNS:               []string{NodeAddress},
		ClusterDomain:            ClusterDomain,
		PodLogsDir:               filepath.Join(dir, "pod-logs"),
		TLSCertFile:              filepath.Join(dir, "kubelet.crt"),
		TLSPrivateKeyFile:        filepath.Join(dir, "kubelet.key"),
		Authentication: kubeletconfig.KubeletAuthentication{
			Anonymous: kubeletconfig.KubeletAnonymousAuthentication{Enabled: ptr.To(false)},
			Webhook:   kubeletconfig.KubeletWebhookAuthentication{Enabled: ptr.To(true)},
			X509:      kubeletconfig.KubeletX509Authentication{ClientCAFile: clientCA},
		},
		Authorization: kubeletconfig.KubeletAuthorization{Mode: kubeletconfig.KubeletAuthorizationModeWebhook},
		EvictionHard: map[string]string{"memory.available": "100Mi", "nodefs.available": "1%",
			"imagefs.available": "1%", "nodefs.inodesFree": "1%"},
		ImageGCHighThresholdPercent: ptr.To[int32](100),
		ImageGCLowThresholdPercent:  ptr.To[int32](99),
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		panic(err) // a fixed, valid structure
	}
	return data
}

// podResolvConf is the resolver configuration the pods get: the machine's, or systemd-resolved's
// list of upstream servers where the machine's names a server on its loopback, which a pod's
// network namespace does not reach; "" (no resolver) when neither serves.
func podResolvConf() string {
	for _, path := range []string{"/etc/resolv.conf", "/run/systemd/resolve/resolv.conf"} {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		usable := false
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Fields(line)
			if len(fields) >= 2 && fields[0] == "nameserver" {
				if ip := net.ParseIP(fields[1]); ip != nil && !ip.IsLoopback() {
					usable = true
				}
			}
		}
		if usable {
			return path
		}
	}
	return ""
}

// startKubeProxy starts kube-proxy in nftables mode with Debian's nft; it masquerades all
// Service traffic, so that replies from a pod on the same bridge come back through the node.
func (c *Cluster) startKubeProxy(opts Options) error {
	kubeconfig := c.nodeDir("kube-proxy.kubeconfig")
	if err := c.WriteKubeconfig(kubeconfig, "system:kube-proxy"); err != nil {
		return err
	}
	healthz, err := FreePort()
	if err != nil {
		return err
	}
	metrics, err := FreePort()
	if err != nil {
		return err
	}
	cfg := kubeproxyconfig.KubeProxyConfiguration{
		TypeMeta:           metav1.TypeMeta{APIVersion: "kubeproxy.config.k8s.io/v1alpha1", Kind: "KubeProxyConfiguration"},
		HostnameOverride:   KubeletNodeName,
		HealthzBindAddress: "127.0.0.1:" + strconv.Itoa(healthz),
		MetricsBindAddress: "127.0.0.1:" + strconv.Itoa(metrics),
		Mode:               "nftables",
		NFTables:           kubeproxyconfig.KubeProxyNFTablesConfiguration{MasqueradeAll: true},
		ClusterCIDR:        PodCIDR,
		// The machine's connection tracking limits are its own.
		Conntrack: kubeproxyconfig.KubeProxyConntrackConfiguration{MaxPerCore: ptr.To[int32](0)},
	}
	cfg.ClientConnection.Kubeconfig = kubeconfig
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	if err := os.WriteFile(c.nodeDir("kube-proxy.yaml"), data, 0o600); err != nil {
		return err
	}
	_, err = c.launchWith(opts, "kube-proxy", opts.NodeBinaries.KubeProxy, []string{"--config=" + c.nodeDir("kube-proxy.yaml")},
		nftEnv(opts.NodeBinaries))
	return err
}

// nftEnv is the environment under which a process runs Debian's nft from the cache: the
// machine's PATH after dirs and nft's directory, and nft's libraries.
func nftEnv(bins NodeBinaries, dirs ...string) []string {
	path := append(append([]string{}, dirs...), filepath.Dir(bins.Nft), os.Getenv("PATH"))
	return []string{"PATH=" + strings.Join(path, string(os.PathListSeparator)), "LD_LIBRARY_PATH=" + bins.NftLibraries}
}
