// Package harness runs Caravan's integration and end-to-end tests against
// a real control plane. The control plane is the local cluster of
// internal/localcluster, started once per test binary from TestMain and
// stopped when the tests end, even when they fail (the processes are tied
// to the test binary, so a crash or a timeout does not leave them behind
// either).
//
//	var env *harness.Env
//
//	func TestMain(m *testing.M) {
//		os.Exit(harness.Main(m, harness.Options{}, &env))
//	}
package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/operatorpod"
	"github.com/caravan-dev/caravan/internal/scheme"
)

// Options say what control plane the tests need.
type Options struct {
	// Full adds kube-controller-manager, kube-scheduler and kwok, so that
	// Deployments get ready pods and owner references are collected.
	Full bool
	// AuditPolicy, when set, makes the API server write an audit log.
	AuditPolicy []byte
	// SkipCRDs leaves Caravan's CustomResourceDefinitions out.
	SkipCRDs bool
	// PodMonitors serves the Prometheus Operator's PodMonitor kind, as a
	// cluster that runs the Prometheus Operator does.
	PodMonitors bool
	// WithoutMutatingAdmissionPolicies starts an API server that serves no
	// MutatingAdmissionPolicy, as Kubernetes 1.30 to 1.35 do.
	WithoutMutatingAdmissionPolicies bool
	// Caravan, with Full, is the caravan binary that runs the process node,
	// on which installed operators run as pods, and the cluster gets a
	// registry for their image.
	Caravan string
	// BuildCaravan builds the caravan binary of this source tree for the tests to run, as
	// Env.Caravan, and runs the process node with it as Caravan does.
	BuildCaravan bool
	// KubeletNode, with Full and a caravan binary, runs the real pods on the kubelet node when
	// the tests run as root, unless NodeEnv says "process". Test binaries take turns at it.
	KubeletNode bool
}

// NodeEnv chooses the node of full clusters with a caravan binary: "kubelet" runs their real
// pods on the kubelet node whatever Options.KubeletNode says, "process" on the process node.
const NodeEnv = "CARAVAN_TEST_NODE"

// node is the node that runs the real pods of a full cluster with a caravan binary.
func (o Options) node() (localcluster.NodeKind, error) {
	switch v := os.Getenv(NodeEnv); v {
	case string(localcluster.NodeKubelet), string(localcluster.NodeProcess):
		return localcluster.NodeKind(v), nil
	case "":
		if o.KubeletNode && os.Geteuid() == 0 {
			return localcluster.NodeKubelet, nil
		}
		return localcluster.NodeProcess, nil
	default:
		return "", fmt.Errorf("%s=%q: want %q or %q", NodeEnv, v, localcluster.NodeKubelet, localcluster.NodeProcess)
	}
}

// Env is a running control plane shared by the tests of one binary.
type Env struct {
	Cluster *localcluster.Cluster
	// Config authenticates as a cluster administrator.
	Config *rest.Config
	// Client is an administrator client with Caravan's scheme, which also watches.
	Client client.WithWatch
	// Binaries are the control-plane executables, including kubectl.
	Binaries localcluster.Binaries
	// Caravan is the caravan binary the tests run: Options.Caravan, or the one
	// Options.BuildCaravan built.
	Caravan string
	// dir is the temporary directory that holds the cluster's state.
	dir string
	// release gives back the kubelet node's turn, once the cluster stopped.
	release func()
	// image is the operator image of this tree, once pushed.
	image operatorImage
	// scraper reads the operators' metrics, once made by Scraper.
	scraper     *operatorpod.Scraper
	scraperOnce sync.Once
	scraperErr  error
}

// Scraper returns the client that reads the operators' metrics and profiles, with a token of
// a ServiceAccount bound to the metrics reader role, made on first use.
func (e *Env) Scraper() (*operatorpod.Scraper, error) {
	e.scraperOnce.Do(func() {
		cs, err := kubernetes.NewForConfig(e.Config)
		if err != nil {
			e.scraperErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		token, err := operatorpod.ScraperToken(ctx, cs, metav1.NamespaceSystem, 24*time.Hour)
		e.scraper, e.scraperErr = operatorpod.NewScraper(token), err
	})
	return e.scraper, e.scraperErr
}

// Main starts the control plane, publishes it in *env, runs the tests and
// stops the control plane. It returns the exit code for os.Exit.
func Main(m *testing.M, opts Options, env **Env) int {
	e, err := Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the test control plane:", err)
		return 1
	}
	*env = e
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the test control plane:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Start builds the control-plane binaries if the cache lacks them, then
// starts a cluster in a temporary directory.
func Start(ctx context.Context, opts Options) (*Env, error) {
	cacheDir, err := localcluster.DefaultCacheDir()
	if err != nil {
		return nil, err
	}
	bins, err := localcluster.EnsureBinaries(ctx, cacheDir, os.Stderr)
	if err != nil {
		return nil, err
	}
	sweepStale()
	dir, err := os.MkdirTemp("", testDirPrefix)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if opts.BuildCaravan {
		if opts.Caravan, err = BuildCaravan(dir); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	lo := localcluster.Options{
		Dir: filepath.Join(dir, "cluster"), Binaries: bins, Full: opts.Full, Nodes: 1,
		Attached: true, AuditPolicy: opts.AuditPolicy, WithoutMutatingAdmissionPolicies: opts.WithoutMutatingAdmissionPolicies,
	}
	release := func() {}
	if opts.Full && opts.Caravan != "" {
		lo.NodeBinary = opts.Caravan
		lo.Registry, lo.CacheDir = true, cacheDir
		if lo.Node, err = opts.node(); err == nil && lo.Node == localcluster.NodeKubelet {
			lo.NodeBinaries, err = localcluster.EnsureNodeBinaries(ctx, cacheDir, os.Stderr)
			if err == nil {
				release, err = localcluster.WaitForKubeletNode(ctx, os.Stderr)
			}
		}
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	cluster, err := localcluster.Start(ctx, lo)
	if err != nil {
		release()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	e := &Env{Cluster: cluster, Binaries: bins, dir: dir, Caravan: opts.Caravan, release: release}
	if err := e.connect(ctx, opts); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	return e, nil
}

func (e *Env) connect(ctx context.Context, opts Options) error {
	cfg, err := e.Cluster.RESTConfig()
	if err != nil {
		return err
	}
	e.Config = cfg
	e.Client, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return err
	}
	if opts.PodMonitors {
		if err := e.servePodMonitors(ctx); err != nil {
			return err
		}
	}
	if opts.SkipCRDs {
		return nil
	}
	return install.ApplyCRDs(ctx, e.Client)
}

// testDirPrefix begins the name of a control plane's temporary directory.
const testDirPrefix = "caravan-test-"

// ownerFile holds, in a control plane's directory, the process id of the test binary that made it.
const ownerFile = "owner.pid"

// sweepStale removes the directories of control planes whose test binary is gone, killed or
// timed out before it could: a full one holds gigabytes of images and pods. Their clusters are
// stopped first, which for a kubelet node also removes its containers, mounts and bridge. A
// directory with something mounted under it still, or without an owner, is left alone.
func sweepStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), testDirPrefix+"*"))
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || processAlive(pid) {
			continue
		}
		if c, err := localcluster.Load(filepath.Join(d, "cluster")); err == nil {
			_ = c.Stop()
		}
		mounts, _ := os.ReadFile("/proc/self/mounts")
		if strings.Contains(string(mounts), " "+d+"/") {
			continue
		}
		_ = os.RemoveAll(d)
	}
}

// processAlive tells whether a process of that id exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Stop stops the control plane and removes its directory.
func (e *Env) Stop() error {
	if err := e.Cluster.Destroy(); err != nil {
		return err
	}
	e.release()
	return os.RemoveAll(e.dir)
}

// Namespace creates a namespace for one test, named after it, and deletes
// it when the test ends. On the local cluster its pods run on the simulated
// nodes, whatever their images: see JVMNamespace.
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	return e.namespace(t, map[string]string{localcluster.SimulatedLabel: "true"})
}

// JVMNamespace is Namespace whose pods of local images (kits) run on the
// process node: their JVMs run for real.
func (e *Env) JVMNamespace(t testing.TB) string {
	t.Helper()
	return e.namespace(t, nil)
}

func (e *Env) namespace(t testing.TB, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespaceName(t.Name()), Labels: labels}}
	if err := e.Client.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating namespace %s: %v", ns.Name, err)
	}
	t.Cleanup(func() {
		err := e.Client.Delete(context.Background(), ns)
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// namespaceName turns a test name into a unique DNS-1123 label.
func namespaceName(test string) string {
	name := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(test), "-"), "-")
	if len(name) > 50 {
		name = strings.TrimRight(name[:50], "-")
	}
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	return name + "-" + hex.EncodeToString(suffix)
}

// User returns a configuration that authenticates as the user name with
// the given groups (a client certificate signed by the cluster's CA).
func (e *Env) User(t testing.TB, name string, groups ...string) *rest.Config {
	t.Helper()
	cfg, err := e.Cluster.UserConfig(name, groups...)
	if err != nil {
		t.Fatalf("minting user %s: %v", name, err)
	}
	return cfg
}

// UserClient is User with a client on Caravan's scheme.
func (e *Env) UserClient(t testing.TB, name string, groups ...string) client.Client {
	t.Helper()
	c, err := client.New(e.User(t, name, groups...), client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatalf("client for user %s: %v", name, err)
	}
	return c
}

// Kubeconfig writes a kubeconfig file for the user name with the given
// groups into the test's temporary directory and returns its path.
func (e *Env) Kubeconfig(t testing.TB, name string, groups ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := e.Cluster.WriteKubeconfig(path, name, groups...); err != nil {
		t.Fatalf("writing kubeconfig for %s: %v", name, err)
	}
	return path
}
