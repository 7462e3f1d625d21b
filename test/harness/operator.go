package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/config/kamelets"
	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/metrics"
	"github.com/caravan-dev/caravan/internal/operatorimage"
	"github.com/caravan-dev/caravan/internal/operatorpod"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/internal/version"
)

// HeartbeatInterval is how often the harness's operators renew their
// registration, so that a gone operator counts as gone within seconds.
const HeartbeatInterval = 2 * time.Second

// OperatorOptions say how InstallOperator installs an operator.
type OperatorOptions struct {
	// Default makes it the default operator (camel-k always is).
	Default bool
	// WatchNamespaces limits it; empty means every namespace.
	WatchNamespaces []string
	// Replicas of its Deployment; 1 when 0.
	Replicas int32
	// Verbosity is its log verbosity.
	Verbosity int
	// Unregistered leaves the IntegrationOperator out, as an install by
	// hand that copies another namespace's objects would: the id is not
	// claimed, and the operator finds out itself who holds it.
	Unregistered bool
	// BuildStrategy is its platform's; "" is dependency-list, which builds kits in the
	// operator without Maven: the many tests that run their kits on the
	// simulated nodes need no jars.
	BuildStrategy string
	// MavenCache, when set, is the size of its Maven cache's claim.
	MavenCache *resource.Quantity
	// KameletCatalog has its platform install the Kamelet catalog of its Camel version, which
	// costs a build: the tests' platforms opt out unless they ask, and get the four Kamelets of
	// config/kamelets instead.
	KameletCatalog bool
	// Env are variables of its container besides Caravan's, as `kubectl set env` adds them.
	Env map[string]string
}

// Operator is an operator installed by a test as `caravan install`
// installs it: a Deployment whose pods run the operator image, built from
// this tree, on the local cluster's process node.
type Operator struct {
	ID        string
	Namespace string

	env      *Env
	replicas int32
}

// operatorImage is the operator image of this tree in the cluster's registry,
// built and pushed once per test binary.
type operatorImage struct {
	once sync.Once
	ref  string
	err  error
}

// OperatorImage builds the operator image of this source tree for this
// machine's platform, pushes it to the cluster's registry once, and
// returns it by digest.
func (e *Env) OperatorImage(t testing.TB) string {
	t.Helper()
	e.image.once.Do(func() {
		e.image.ref, e.image.err = e.pushOperatorImage()
	})
	if e.image.err != nil {
		t.Fatalf("the operator image: %v", e.image.err)
	}
	return e.image.ref
}

func (e *Env) pushOperatorImage() (string, error) {
	if e.Cluster.RegistryAddress == "" {
		return "", fmt.Errorf("the cluster runs no registry: start it with Options.Caravan")
	}
	cacheDir, err := localcluster.DefaultCacheDir()
	if err != nil {
		return "", err
	}
	return operatorimage.PushLocal(context.Background(), sourceRoot(), version.Get(), e.Cluster.RegistryAddress, cacheDir, os.Stderr)
}

// InstallOperator installs operator id into namespace and uninstalls it when the test ends.
// namespace must exist. The objects are those of `caravan install` without the admission
// policies, running the operator image of this tree. Its pods start in the background: see
// Operator.Ready.
func (e *Env) InstallOperator(t testing.TB, id, namespace string, opts OperatorOptions) *Operator {
	t.Helper()
	replicas := opts.Replicas
	if replicas == 0 {
		replicas = 1
	}
	strategy := opts.BuildStrategy
	if strategy == "" {
		strategy = build.StrategyDependencyList
	}
	objs, err := install.Manifests(install.Config{
		ID: id, Namespace: namespace, Default: opts.Default || id == ownership.DefaultID, WatchNamespaces: opts.WatchNamespaces,
		Image: e.OperatorImage(t), Registry: e.Cluster.RegistryAddress, RegistryInsecure: true,
		Version: version.Get(), SkipAdmission: true, Replicas: ptr.To(replicas),
		HeartbeatInterval: HeartbeatInterval, Verbosity: opts.Verbosity, MavenCache: opts.MavenCache,
		BuildStrategy: strategy, SkipKamelets: !opts.KameletCatalog,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !opts.KameletCatalog {
		objs = append(objs, starterKamelets(t, namespace)...)
	}
	setOperatorEnv(objs, opts.Env)
	if opts.Unregistered {
		objs = slices.DeleteFunc(objs, func(o client.Object) bool {
			_, isRegistration := o.(*camelv1alpha1.IntegrationOperator)
			return isRegistration
		})
	}
	installer := &install.Installer{Client: e.Client, Out: io.Discard}
	if err := installer.Install(context.Background(), namespace, objs); err != nil {
		t.Fatalf("installing operator %s in %s: %v", id, namespace, err)
	}
	op := &Operator{ID: id, Namespace: namespace, env: e, replicas: replicas}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log of operator %s in %s:\n%s", id, namespace, op.logTail(40))
		}
		if err := installer.Uninstall(context.Background(), id, namespace, false); err != nil {
			t.Errorf("uninstalling operator %s from %s: %v", id, namespace, err)
		}
	})
	return op
}

// setOperatorEnv adds env, sorted by name, to the container of the operator's Deployment among objs.
func setOperatorEnv(objs []client.Object, env map[string]string) {
	for _, o := range objs {
		if d, ok := o.(*appsv1.Deployment); ok {
			c := &d.Spec.Template.Spec.Containers[0]
			for _, name := range slices.Sorted(maps.Keys(env)) {
				c.Env = append(c.Env, corev1.EnvVar{Name: name, Value: env[name]})
			}
		}
	}
}

// Pods are the operator's pods that are running, have an address and are
// not being deleted, oldest first.
func (o *Operator) Pods(t testing.TB) []corev1.Pod {
	t.Helper()
	return operatorpod.Running(o.env.OperatorPods(t, o.Namespace, o.ID))
}

// address is the address of the operator's newest running pod, "" when
// none runs.
func (o *Operator) address() string {
	pods, err := operatorpod.List(context.Background(), o.env.Client, o.Namespace, o.ID)
	if err != nil {
		return ""
	}
	p, _ := operatorpod.Newest(pods)
	return p.Status.PodIP
}

// MetricsURL is the metrics endpoint of the operator's newest running pod.
func (o *Operator) MetricsURL() string {
	return PodMetricsURL(o.address())
}

// PodMetricsURL is the metrics endpoint of an operator pod at address.
func PodMetricsURL(address string) string {
	return operatorpod.MetricsURL(address)
}

func (o *Operator) probeURL(path string) string {
	return operatorpod.ProbeURL(o.address(), path)
}

// Stop scales the operator to 0 and waits until its pods are gone: a
// graceful stop, which releases its leader lease.
func (o *Operator) Stop(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), podsGoneTimeout)
	defer cancel()
	if err := operatorpod.Stop(ctx, o.env.Client, o.Namespace, o.ID); err != nil {
		t.Fatal(err)
	}
}

// Start scales the operator back to its replicas.
func (o *Operator) Start(t testing.TB) {
	t.Helper()
	o.env.ScaleOperator(t, o.Namespace, o.ID, o.replicas)
}

// Kill stops the operator as a crash does: SIGKILL to its processes, no
// release of anything; its Deployment is scaled to 0 so that it stays
// down, and Kill waits until its pods are gone.
func (o *Operator) Kill(t testing.TB) {
	t.Helper()
	o.env.KillOperator(t, o.Namespace, o.ID)
	o.waitNoPods(t)
}

// podsGoneTimeout is how long Stop and Kill wait for the operator's pods
// to go.
const podsGoneTimeout = 2 * time.Minute

func (o *Operator) waitNoPods(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), podsGoneTimeout)
	defer cancel()
	if err := operatorpod.WaitNoPods(ctx, o.env.Client, o.Namespace, o.ID); err != nil {
		t.Fatal(err)
	}
}

// ScaleOperator sets the replicas of installed operator id's Deployment.
func (e *Env) ScaleOperator(t testing.TB, namespace, id string, replicas int32) {
	t.Helper()
	if err := operatorpod.Scale(context.Background(), e.Client, namespace, id, replicas); err != nil {
		t.Fatal(err)
	}
}

// Running reports whether a pod of the operator runs.
func (o *Operator) Running() bool {
	return o.address() != ""
}

// Healthy reports whether the operator's /healthz answers 200.
func (o *Operator) Healthy() bool {
	if !o.Running() {
		return false
	}
	resp, err := http.Get(o.probeURL("/healthz"))
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Ready reports whether the operator's /readyz answers 200, and its body.
func (o *Operator) Ready() (bool, string) {
	if !o.Running() {
		return false, "no pod of operator " + o.ID + " runs"
	}
	resp, err := http.Get(o.probeURL("/readyz?verbose"))
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode == http.StatusOK, string(body)
}

// Metric returns the sum of the samples of a metric whose label set
// contains every given name="value" pair, and whether any was found, from
// the operator's newest running pod.
func (o *Operator) Metric(name string, labels ...string) (float64, bool) {
	if !o.Running() {
		return 0, false
	}
	return o.env.Metric(o.MetricsURL(), name, labels...)
}

// Metric returns the sum of the samples of a metric served at url whose
// label set contains every given name="value" pair, and whether any was
// found. It reads url as Prometheus does, with the token of Scraper.
func (e *Env) Metric(url, name string, labels ...string) (float64, bool) {
	samples, err := e.Scrape(url)
	if err != nil {
		return 0, false
	}
	pairs := make([]string, 0, 2*len(labels))
	for _, l := range labels {
		k, quoted, _ := strings.Cut(l, "=")
		v, err := strconv.Unquote(quoted)
		if err != nil {
			return 0, false
		}
		pairs = append(pairs, k, v)
	}
	return samples.Find(name, pairs...)
}

// Scrape reads every sample served at url as Prometheus does, with the token of Scraper.
func (e *Env) Scrape(url string) (metrics.Samples, error) {
	scraper, err := e.Scraper()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body, err := scraper.Get(ctx, url)
	if err != nil {
		return nil, err
	}
	return metrics.ParseText(bytes.NewReader(body))
}

// Log is the log of the operator's pods, as `kubectl logs` gives it, one
// pod after the other.
func (o *Operator) Log() string {
	cs, err := kubernetes.NewForConfig(o.env.Config)
	if err != nil {
		return err.Error()
	}
	pods, err := operatorpod.List(context.Background(), o.env.Client, o.Namespace, o.ID)
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range pods {
		b.WriteString(operatorpod.Log(context.Background(), cs, p.Namespace, p.Name, 0))
	}
	return b.String()
}

// LogContains reports whether the operator's log contains s.
func (o *Operator) LogContains(s string) bool {
	return strings.Contains(o.Log(), s)
}

// LogLines returns the lines of the operator's log that contain s.
func (o *Operator) LogLines(s string) string {
	var lines []string
	for _, line := range strings.Split(o.Log(), "\n") {
		if strings.Contains(line, s) {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}

func (o *Operator) logTail(n int) string {
	lines := strings.Split(strings.TrimRight(o.Log(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// starterKamelets are the four Kamelets of config/kamelets in namespace, which the tests bind where
// the catalog is off.
func starterKamelets(t testing.TB, namespace string) []client.Object {
	t.Helper()
	catalog, err := kamelets.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	objs := make([]client.Object, 0, len(catalog))
	for _, k := range catalog {
		k.TypeMeta = metav1.TypeMeta{APIVersion: camelv1.GroupVersion.String(), Kind: "Kamelet"}
		k.Namespace = namespace
		objs = append(objs, k)
	}
	return objs
}
