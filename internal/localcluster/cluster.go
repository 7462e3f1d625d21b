// Package localcluster runs a real Kubernetes control plane on this
// machine. It runs etcd, kube-apiserver and, for a full cluster,
// kube-controller-manager, kube-scheduler and kwok with simulated nodes on
// which pods reach Running. It backs `caravan local`, the test harness and
// the benchmarks.
package localcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// stateFile records a cluster's processes and endpoints in its directory.
const stateFile = "state.json"

// ErrNotRunning is returned by Load when a directory holds no cluster.
var ErrNotRunning = errors.New("no local cluster")

// Options say what cluster to start.
type Options struct {
	// Dir holds the cluster's state: certificates, etcd data, logs,
	// kubeconfig. It must not hold a running cluster.
	Dir string
	// Binaries are the component executables (see EnsureBinaries).
	Binaries Binaries
	// Full also starts kube-controller-manager, kube-scheduler and kwok,
	// and registers Nodes simulated nodes. Without it only etcd and the
	// API server run, which is enough for API-level tests.
	Full  bool
	Nodes int
	// Attached ties the processes' lives to the calling process.
	Attached bool
	// AuditPolicy, when set, makes the API server write an audit log
	// (JSON lines) to AuditLogPath.
	AuditPolicy []byte
	// Progress receives one line per step; nil discards them.
	Progress io.Writer
	// Profiling serves the API server's /debug/pprof (to users allowed
	// the non-resource URL, the admin among them).
	Profiling bool
	// NodeBinary, when set with Full, is the caravan binary that runs the
	// process node (caravan local node), on which operator pods run.
	NodeBinary string
	// Registry runs an OCI registry (Binaries.Registry) for the operator
	// image and kit builds, with the images of runtime.Images pushed into it.
	Registry bool
	// CacheDir holds the images made from Debian's packages (see
	// debimage.BuildCached); Registry needs it.
	CacheDir string
	// KeptVolumes, when set, is where the process node provisions the claims annotated
	// procnode.KeptAnnotation (Maven caches), so that they outlive the cluster. caravan local up
	// sets it under CacheDir; tests leave it empty.
	KeptVolumes string
	// WithoutMutatingAdmissionPolicies serves no MutatingAdmissionPolicy, as Kubernetes 1.30 to
	// 1.35 do. The API and its admission plugin are off, and a webhook that the process node
	// serves places pods instead of PlacementPolicy.
	WithoutMutatingAdmissionPolicies bool
	// Node is the node that runs the operator, builder and kit pods, with Full: NodeProcess
	// (caravan local node, NodeBinary) or NodeKubelet (a kubelet with containerd, NodeBinaries),
	// which needs root.
	Node NodeKind
	// NodeBinaries are the kubelet node's executables (see EnsureNodeBinaries).
	NodeBinaries NodeBinaries
}

// NodeKind is the kind of node that runs a local cluster's real pods.
type NodeKind string

// The kinds of node.
const (
	// NodeProcess runs pods as processes of the machine: caravan local node.
	NodeProcess NodeKind = "process"
	// NodeKubelet is a real kubelet with containerd, runc and a bridge network.
	NodeKubelet NodeKind = "kubelet"
)

// State is what a running cluster records about itself.
type State struct {
	Dir        string `json:"dir"`
	Server     string `json:"server"`
	etcdURL    string
	Kubeconfig string `json:"kubeconfig"`
	Full       bool   `json:"full"`
	Nodes      int    `json:"nodes"`
	Audit      bool   `json:"audit"`
	// Node is the kind of node that runs the real pods; "" is NodeProcess.
	Node NodeKind `json:"node,omitempty"`
	// RegistryAddress is the local registry's host:port (plain HTTP), if one runs.
	RegistryAddress string     `json:"registryAddress,omitempty"`
	StartedAt       time.Time  `json:"startedAt"`
	Processes       []*Process `json:"processes"`
}

// Cluster is a started or loaded local cluster.
type Cluster struct {
	State
	ca *authority
}

// AuditLogPath is where the API server writes its audit log when
// Options.AuditPolicy is set.
func (c *Cluster) AuditLogPath() string { return filepath.Join(c.Dir, "audit.log") }

// Start starts a cluster and waits until it serves requests (and, for a
// full cluster, until its nodes are Ready). On failure every process it
// started is stopped and the error carries the end of the failing
// component's log.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("the local cluster runs its pods in Linux namespaces: it runs on Linux only, not %s; use a cluster of your own (caravan install --image ...)", runtime.GOOS)
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if err := checkNodeOptions(opts); err != nil {
		return nil, err
	}
	if existing, err := Load(opts.Dir); err == nil && existing.AnyAlive() {
		return nil, fmt.Errorf("a local cluster already runs from %s (server %s)", opts.Dir, existing.Server)
	}
	if err := os.RemoveAll(opts.Dir); err != nil {
		return nil, fmt.Errorf("cleaning %s: %w", opts.Dir, err)
	}
	if err := os.MkdirAll(filepath.Join(opts.Dir, "pki"), 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", opts.Dir, err)
	}
	c := &Cluster{State: State{Dir: opts.Dir, Full: opts.Full, Nodes: opts.Nodes, Node: opts.Node,
		Audit: len(opts.AuditPolicy) > 0, StartedAt: time.Now()}}
	if err := c.start(ctx, opts); err != nil {
		if stopErr := c.Stop(); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
		return nil, err
	}
	return c, nil
}

// checkNodeOptions refuses, before anything is touched, a kubelet node the options cannot give.
func checkNodeOptions(opts Options) error {
	switch {
	case opts.Node != NodeKubelet:
		return nil
	case !opts.Full:
		return errors.New("the kubelet node needs a full cluster")
	case !opts.Registry:
		return errors.New("the kubelet node needs the registry: it pulls the pod sandbox image from it")
	case opts.WithoutMutatingAdmissionPolicies:
		return errors.New("the kubelet node places pods with the MutatingAdmissionPolicy; the placement webhook is the process node's")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return err
	}
	if len(dir) > maxKubeletNodeDir {
		return fmt.Errorf("the kubelet node needs a cluster directory of at most %d bytes, since the kubelet's sockets are under it "+
			"and a socket's path holds at most 107: %s has %d; give a shorter one", maxKubeletNodeDir, dir, len(dir))
	}
	return nil
}

// maxKubeletNodeDir is the longest cluster directory the kubelet node takes: its longest socket,
// DIR/kubelet-node/kubelet/device-plugins/kubelet.sock, within a socket path's 107 bytes.
const maxKubeletNodeDir = 107 - len("/kubelet-node/kubelet/device-plugins/kubelet.sock")

// step is one stage of starting a cluster.
type step struct {
	name string
	run  func(context.Context, Options) error
}

func (c *Cluster) start(ctx context.Context, opts Options) error {
	var steps []step
	if opts.Node == NodeKubelet {
		// The API server and the registry listen on the node's bridge, where pods reach them.
		steps = append(steps, step{"node network", c.startNodeNetwork})
	}
	steps = append(steps, []step{
		{"certificates", c.writePKI},
		{"etcd", c.startEtcd},
		{"kube-apiserver", c.startAPIServer},
	}...)
	// The registry comes before the process node, whose placement policy
	// sends the pods of its images there.
	if opts.Registry {
		if opts.CacheDir == "" {
			return errors.New("the registry needs the cache directory that holds its images")
		}
		steps = append(steps, step{"registry", c.startRegistry})
	}
	if opts.Full {
		steps = append(steps,
			step{"controllers, scheduler and kwok", c.startControllers},
			step{"nodes", c.registerNodes})
		switch {
		case opts.Node == NodeKubelet:
			steps = append(steps, step{"kubelet node", c.startKubeletNode})
		case opts.NodeBinary != "":
			steps = append(steps, step{"process node", c.startProcessNode})
		}
	}
	for _, s := range steps {
		start := time.Now()
		if err := s.run(ctx, opts); err != nil {
			return err
		}
		fmt.Fprintf(opts.Progress, "  %s ready (%s)\n", s.name, time.Since(start).Round(100*time.Millisecond))
	}
	return c.saveState()
}

// Load reads the state of the cluster in dir. It returns ErrNotRunning
// (wrapped) when dir holds none.
func Load(dir string) (*Cluster, error) {
	data, err := os.ReadFile(filepath.Join(dir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s", ErrNotRunning, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("reading cluster state: %w", err)
	}
	c := &Cluster{}
	if err := json.Unmarshal(data, &c.State); err != nil {
		return nil, fmt.Errorf("reading cluster state %s: %w", filepath.Join(dir, stateFile), err)
	}
	ca, err := loadAuthority(filepath.Join(dir, "pki"))
	if err != nil {
		return nil, err
	}
	c.ca = ca
	return c, nil
}

func (c *Cluster) saveState() error {
	data, err := json.MarshalIndent(c.State, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(c.Dir, stateFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(c.Dir, stateFile))
}

// AnyAlive reports whether any of the cluster's processes still runs.
func (c *Cluster) AnyAlive() bool {
	for _, p := range c.Processes {
		if p.Alive() {
			return true
		}
	}
	return false
}

// Stop stops every process of the cluster, the last started first. The
// state directory is kept (see Destroy).
func (c *Cluster) Stop() error {
	// Other caravan commands may have added processes (operators) since
	// this cluster was loaded.
	if fresh, err := Load(c.Dir); err == nil {
		c.State = fresh.State
	}
	var errs []error
	for i := len(c.Processes) - 1; i >= 0; i-- {
		if err := c.Processes[i].stop(10 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Node == NodeKubelet && c.ownsKubeletNode() {
		if err := c.cleanKubeletNode(); err != nil {
			errs = append(errs, err)
		}
		if err := os.Remove(kubeletNodeOwner); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Destroy stops the cluster and removes its state directory.
func (c *Cluster) Destroy() error {
	if err := c.Stop(); err != nil {
		return err
	}
	return os.RemoveAll(c.Dir)
}

// RESTConfig is a cluster-admin configuration (group system:masters).
func (c *Cluster) RESTConfig() (*rest.Config, error) {
	return c.UserConfig("caravan-admin", "system:masters")
}

// adminClientset is a clientset of the cluster-admin configuration.
func (c *Cluster) adminClientset() (kubernetes.Interface, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// UserConfig mints a client certificate for the user name with the given
// groups and returns a configuration that authenticates as that user.
func (c *Cluster) UserConfig(name string, groups ...string) (*rest.Config, error) {
	kp, err := c.ca.client(name, groups)
	if err != nil {
		return nil, err
	}
	return &rest.Config{
		Host: c.Server,
		TLSClientConfig: rest.TLSClientConfig{
			CAData: c.ca.certPEM, CertData: kp.CertPEM, KeyData: kp.KeyPEM,
		},
		QPS:   100,
		Burst: 200,
	}, nil
}

// launch starts a component and records it in the state file at once, so
// that a cluster whose start was interrupted can still be stopped.
func (c *Cluster) launch(opts Options, name, binary string, args []string) (*Process, error) {
	return c.launchWith(opts, name, binary, args, nil)
}

// launchWith is launch with env added to the process's environment.
func (c *Cluster) launchWith(opts Options, name, binary string, args, env []string) (*Process, error) {
	abs, err := filepath.EvalSymlinks(binary)
	if err != nil {
		return nil, fmt.Errorf("finding %s binary: %w", name, err)
	}
	p, err := startProcess(c.Dir, name, abs, args, env, opts.Attached)
	if err != nil {
		return nil, err
	}
	c.Processes = append(c.Processes, p)
	return p, c.saveState()
}

// waitFor polls check until it returns true, the process dies, or timeout.
func waitFor(ctx context.Context, p *Process, timeout time.Duration, check func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var lastErr error
	for {
		ok, err := check(ctx)
		if ok {
			return nil
		}
		lastErr = err
		if p != nil && !p.Alive() {
			return fmt.Errorf("%s exited; end of %s:\n%s", p.Name, p.Log, p.lastLines(20))
		}
		select {
		case <-ctx.Done():
			msg := fmt.Sprintf("waiting for %s", "component")
			if p != nil {
				msg = fmt.Sprintf("%s did not become ready in %s; end of %s:\n%s", p.Name, timeout, p.Log, p.lastLines(20))
			}
			if lastErr != nil {
				msg += "\nlast error: " + lastErr.Error()
			}
			return errors.New(msg)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

var (
	portsMu sync.Mutex
	// portsGiven are the ports this process handed out: the kernel may
	// offer a port again once the probe closed it, before the component
	// it was meant for has bound it.
	portsGiven = map[int]bool{}
)

// FreePort asks the kernel for an unused loopback port, never one this
// process handed out before.
func FreePort() (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("finding a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if !portsGiven[port] {
			portsGiven[port] = true
			return port, nil
		}
	}
	return 0, errors.New("finding a free port: no new port after 100 tries")
}

// FreeServerPort is an unused loopback port below the kernel's ephemeral range
// (20000-32767), for a component that may be restarted on the same port. While it is
// down, clients that keep reconnecting to a port of the ephemeral range may be given that
// very port as their own source port (a TCP self-connect) and hold it, so that the
// component could not listen on it again.
func FreeServerPort() (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 200 {
		port := 20000 + rand.IntN(12768)
		if portsGiven[port] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		_ = l.Close()
		portsGiven[port] = true
		return port, nil
	}
	return 0, errors.New("finding a free server port: none free after 200 tries")
}

func loopbackURL(scheme string, port int) string {
	return scheme + "://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// PodNodeName is the node that runs the cluster's real pods: the kubelet node's or the
// process node's name.
func (c *Cluster) PodNodeName() string {
	if c.Node == NodeKubelet {
		return KubeletNodeName
	}
	return ProcessNodeName
}

// nodeProcessNames are the processes of the node that runs the real pods, of either kind: what
// a node costs beside the control plane, not counting the pods' own processes.
var nodeProcessNames = map[string]bool{"process-node": true, "containerd": true, "kubelet": true, "kube-proxy": true, "provisioner": true, "coredns": true}

// NodeProcesses are the processes the cluster started for its node of real pods.
func (c *Cluster) NodeProcesses() []*Process {
	var out []*Process
	for _, p := range c.Processes {
		if nodeProcessNames[p.Name] {
			out = append(out, p)
		}
	}
	return out
}

// HostAddress is where the API server and the registry listen: the loopback, or with the
// kubelet node the node's bridge address, which its pods reach.
func (c *Cluster) HostAddress() string {
	if c.Node == NodeKubelet {
		return NodeAddress
	}
	return "127.0.0.1"
}
