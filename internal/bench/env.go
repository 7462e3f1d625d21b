package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/config/rbac"
	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/operatorpod"
	"github.com/caravan-dev/caravan/internal/scheme"
)

// operatorNamespace is where the bench's operators run (their platforms,
// leases and registrations live there).
const operatorNamespace = "bench-system"

// operatorRole is the ClusterRole the bench binds the bare operator to
// (installed operators get their own, from `caravan install`).
const operatorRole = "caravan-operator"

// auditPolicy makes the API server write the operators' writes, and
// nothing else, to its audit log. That tells which operator wrote what,
// and what it wrote, at the cost of one log line per operator write.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  userGroups: ["` + operatorGroup + `", "system:serviceaccounts:` + operatorNamespace + `"]
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
`

// env is the bench's own local cluster, its administrator client and the
// operators it installed.
type env struct {
	dir       string
	binary    string
	cluster   *localcluster.Cluster
	config    *rest.Config
	client    client.WithWatch
	operators []*Operator
	// image is the operator image, once pushed.
	image string
	// sets are the operators started by operatorSet, by set name.
	sets     map[string][]*Operator
	progress io.Writer
	// skipAdmission leaves the admission policies out (see
	// Options.SkipAdmission).
	skipAdmission bool
	// rolloutFlows gives the rollout's integrations flows.
	rolloutFlows bool
	// profileOperators takes the operators' CPU profiles over the rollout.
	profileOperators bool
	// scraper reads the operators' metrics and profiles.
	scraper *operatorpod.Scraper
	// hostProcesses runs the operators started next as processes of this machine, not pods;
	// hostOperators counts those started, to give each its address.
	hostProcesses bool
	hostOperators int
	// upSeconds is how long the cluster took to start, until ready.
	upSeconds float64
}

// startEnv starts a full local cluster in a new temporary directory,
// building its binaries when the cache lacks them. The processes are
// attached: they die with the bench even when it is killed.
func startEnv(ctx context.Context, binary string, progress io.Writer) (*env, error) {
	return startEnvOn(ctx, binary, progress, localcluster.NodeProcess)
}

// startEnvOn is startEnv with the real pods on the node of that kind.
func startEnvOn(ctx context.Context, binary string, progress io.Writer, node localcluster.NodeKind) (*env, error) {
	cacheDir, err := localcluster.DefaultCacheDir()
	if err != nil {
		return nil, err
	}
	bins, err := localcluster.EnsureBinaries(ctx, cacheDir, progress)
	if err != nil {
		return nil, err
	}
	opts := localcluster.Options{Binaries: bins, Full: true, Nodes: 1,
		Attached: true, AuditPolicy: []byte(auditPolicy), Profiling: true, Progress: progress,
		NodeBinary: binary, Registry: true, CacheDir: cacheDir, Node: node}
	if node == localcluster.NodeKubelet {
		if opts.NodeBinaries, err = localcluster.EnsureNodeBinaries(ctx, cacheDir, progress); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "caravan-bench-")
	if err != nil {
		return nil, err
	}
	opts.Dir = filepath.Join(dir, "cluster")
	fmt.Fprintf(progress, "starting a local cluster in %s (%s node)\n", dir, node)
	start := time.Now()
	cluster, err := localcluster.Start(ctx, opts)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	e := &env{dir: dir, binary: binary, cluster: cluster, progress: progress, upSeconds: measure.Round3(time.Since(start).Seconds())}
	if err := e.connect(ctx); err != nil {
		return nil, errors.Join(err, e.stop())
	}
	return e, nil
}

func (e *env) connect(ctx context.Context) error {
	cfg, err := e.cluster.RESTConfig()
	if err != nil {
		return err
	}
	// The bench's own client must never be what limits a burst, nor make
	// the API server compress what its watches follow.
	cfg.QPS, cfg.Burst = -1, 0
	cfg.DisableCompression = true
	e.config = cfg
	if e.client, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme.New()}); err != nil {
		return err
	}
	if err := install.ApplyCRDs(ctx, e.client); err != nil {
		return fmt.Errorf("installing the CRDs: %w", err)
	}
	if err := e.bindOperatorRole(ctx); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	token, err := operatorpod.ScraperToken(ctx, cs, metav1.NamespaceSystem, 24*time.Hour)
	if err != nil {
		return err
	}
	e.scraper = operatorpod.NewScraper(token)
	return e.createNamespace(ctx, operatorNamespace)
}

// bindOperatorRole installs the operator ClusterRole generated under
// config/rbac and binds it to the group of the bare operator.
func (e *env) bindOperatorRole(ctx context.Context) error {
	rules, err := rbac.OperatorRules()
	if err != nil {
		return err
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: operatorRole}, Rules: rules}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "caravan-bench-operators"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: operatorRole},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: operatorGroup}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := e.client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("binding the operator role: %w", err)
		}
	}
	return nil
}

func (e *env) createNamespace(ctx context.Context, name string) error {
	return e.createNamespaceWith(ctx, name, nil)
}

// createNamespaceWith creates namespace name with labels, unless it exists.
func (e *env) createNamespaceWith(ctx context.Context, name string, labels map[string]string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := e.client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

// deleteNamespace deletes a namespace and waits until it is gone, so
// that its clean-up does not load the next measurement.
func (e *env) deleteNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := e.client.Delete(ctx, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("deleting namespace %s: %w", name, err)
	}
	for {
		err := e.client.Get(ctx, client.ObjectKey{Name: name}, ns)
		if apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for namespace %s to go: %w", name, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// startOperators starts operators with the given ids and waits until all
// are ready; configure, when not nil, changes what is installed.
func (e *env) startOperators(ctx context.Context, configure func(*install.Config), ids ...string) ([]*Operator, error) {
	if !e.skipAdmission {
		if err := e.installAdmission(ctx, ids); err != nil {
			return nil, err
		}
	}
	ops := make([]*Operator, 0, len(ids))
	for _, id := range ids {
		start := e.startOperator
		if e.hostProcesses {
			start = e.startHostOperator
		}
		op, err := start(ctx, id, configure)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	for _, op := range ops {
		if err := op.waitReady(ctx, 2*time.Minute); err != nil {
			return nil, err
		}
	}
	return ops, nil
}

// installAdmission installs the admission policies of `caravan install` for ids and waits until
// they act. The operators then run as on a cluster installed by it: the API server mirrors the
// operator-id label. The wait ends once a server-side dry run of an assigned Integration comes
// back labelled.
func (e *env) installAdmission(ctx context.Context, ids []string) error {
	installer := &install.Installer{Client: e.client, Out: io.Discard}
	if err := installer.Install(ctx, operatorNamespace, install.AdmissionPolicies()); err != nil {
		return fmt.Errorf("installing the admission policies: %w", err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		probe := newIntegration(operatorNamespace, "admission-probe", ids[0], 0, Image)
		err := e.client.Create(ctx, probe, client.DryRunAll)
		if err == nil && probe.GetLabels()[camelv1.OperatorIDLabel] == ids[0] {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the admission policies did not take effect within a minute (last error: %v)", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// stop ends the operators, then the cluster, and removes the directory.
// It needs no context: it also runs after the bench was interrupted.
func (e *env) stop() error {
	for _, op := range e.operators {
		op.stop()
	}
	err := e.cluster.Destroy()
	if err == nil {
		err = os.RemoveAll(e.dir)
	}
	return err
}

// httpOK tells whether a GET of url answers 200 within two seconds.
func httpOK(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := measure.Get(ctx, url)
	return err == nil
}

// controlPlaneCPU returns the CPU seconds each process of the local
// cluster has used, by name.
func (e *env) controlPlaneCPU() (map[string]float64, error) {
	out := map[string]float64{}
	for _, p := range e.cluster.Processes {
		s, err := measure.ProcessCPU(p.PID)
		if err != nil {
			return nil, fmt.Errorf("cpu of %s: %w", p.Name, err)
		}
		out[p.Name] += s
	}
	return out, nil
}

// controlPlaneCPUSince returns, by name, the CPU seconds each process of
// the local cluster has used since before (a controlPlaneCPU reading).
func (e *env) controlPlaneCPUSince(before map[string]float64) (map[string]float64, error) {
	after, err := e.controlPlaneCPU()
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for name, s := range after {
		out[name] = measure.Round3(s - before[name])
	}
	return out, nil
}
