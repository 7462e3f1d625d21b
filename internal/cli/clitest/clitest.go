// Package clitest holds what the tests of the CLI's packages share: the control plane they run
// against, the objects they create there, and golden files.
package clitest

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/scheme"
	"github.com/caravan-dev/caravan/test/harness"
)

var (
	clusterOnce sync.Once
	clusterEnv  *harness.Env
	clusterErr  error
)

// Cluster is the API server (with etcd and Caravan's CRDs) that the
// commands' tests run against, started by the first test that asks for it
// and stopped after the last; the package's pure tests run without it.
// The control plane has no controllers: a deleted namespace keeps its
// Objects, so create removes what it creates when the test ends. Tests
// that create objects do not run in parallel: cluster-scoped
// IntegrationOperators have the same names in several tests, and -A lists
// every namespace.
func Cluster(t testing.TB) *harness.Env {
	t.Helper()
	clusterOnce.Do(func() {
		clusterEnv, clusterErr = harness.Start(context.Background(), harness.Options{})
	})
	if clusterErr != nil {
		t.Fatalf("starting the test control plane: %v", clusterErr)
	}
	return clusterEnv
}

// WatchClient is an administrator client of env that can also watch, as
// the commands that wait need.
func WatchClient(t *testing.T) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(Cluster(t).Config, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Create creates objs on the API server, then writes the status they
// carry (a create drops it), and deletes them when the test ends. Each
// object is updated with what the server returned.
func Create(t *testing.T, objs ...client.Object) {
	t.Helper()
	ctx := context.Background()
	for _, obj := range objs {
		want, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		if err := Cluster(t).Client.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
		}
		t.Cleanup(func() {
			if err := Cluster(t).Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
			}
		})
		status, _ := want["status"].(map[string]any)
		if len(status) == 0 {
			continue
		}
		created, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		created["status"] = status
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(created, obj); err != nil {
			t.Fatal(err)
		}
		if err := Cluster(t).Client.Status().Update(ctx, obj); err != nil {
			t.Fatalf("writing the status of %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
		}
	}
}

// init defines the -update flag, which rewrites the golden files, unless
// it is defined already. Other golden tests of the package may define it
// too: package variables are initialised before init runs, so whichever
// defines it, it is defined once.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata")
	}
}

// updateGoldenFiles reports whether the test runs with -update.
func updateGoldenFiles() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// Now is the clock of every printing test.
var Now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// Ago is a time d before Now.
func Ago(d time.Duration) metav1.Time { return metav1.NewTime(Now.Add(-d)) }

// AssertGolden compares got with testdata/<name>, or rewrites the file
// with -update.
func AssertGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if updateGoldenFiles() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s (run go test with -update to create it): %v", path, err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run go test with -update after checking it):\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// Condition is a condition whose last transition was since ago.
func Condition(t string, status metav1.ConditionStatus, reason, message string, since time.Duration) metav1.Condition {
	return metav1.Condition{Type: t, Status: status, Reason: reason, Message: message, LastTransitionTime: Ago(since)}
}

// ObjectMeta is the metadata of an object created that long ago, assigned to operatorID unless empty.
func ObjectMeta(ns, name, operatorID string, created time.Duration) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: Ago(created), UID: types.UID("uid-" + name)}
	if operatorID != "" {
		m.Annotations = map[string]string{camelv1.OperatorIDAnnotation: operatorID}
		m.Labels = map[string]string{camelv1.OperatorIDLabel: operatorID}
	}
	return m
}

// SampleIntegrations covers each column: a running integration with a kit,
// one building, an unassigned one without status, one for an operator
// that is not registered and one for an operator that went stale.
func SampleIntegrations() []*camelv1.Integration {
	running := &camelv1.Integration{ObjectMeta: ObjectMeta("apps", "timer-to-log", "tenant-a", 5*time.Minute)}
	running.Spec.Replicas = ptr.To[int32](2)
	running.Status = camelv1.IntegrationStatus{
		Phase: camelv1.IntegrationPhaseRunning, Image: "registry.local/kits/kit-abc@sha256:0123", Digest: "v1-9f8e",
		IntegrationKit: &camelv1.KitReference{Name: "kit-abc"}, Replicas: ptr.To[int32](2),
		Ownership: camelv1.Ownership{Owner: "tenant-a", Epoch: 1},
	}
	running.Status.Conditions = []metav1.Condition{
		Condition(camelv1.ConditionReady, metav1.ConditionTrue, "DeploymentReady", "2/2 pods ready, 2 updated", 4*time.Minute),
	}
	building := &camelv1.Integration{ObjectMeta: ObjectMeta("apps", "building", "tenant-b", 3*time.Hour)}
	building.Status.Phase = camelv1.IntegrationPhaseBuildingKit
	building.Status.Ownership = camelv1.Ownership{Owner: "tenant-b", Epoch: 3}
	building.Status.Conditions = []metav1.Condition{
		Condition(camelv1.ConditionReady, metav1.ConditionFalse, "KitNotReady", "waiting for kit kit-def", time.Minute),
	}
	unassigned := &camelv1.Integration{ObjectMeta: ObjectMeta("apps", "fresh", "", 40*time.Second)}
	lost := &camelv1.Integration{ObjectMeta: ObjectMeta("other", "lost", "gone", 49*time.Hour)}
	stale := &camelv1.Integration{ObjectMeta: ObjectMeta("other", "left-behind", "tenant-c", 26*time.Hour)}
	stale.Status.Phase = camelv1.IntegrationPhaseRunning
	stale.Status.Ownership = camelv1.Ownership{Owner: "tenant-c", Epoch: 1}
	return []*camelv1.Integration{running, building, unassigned, lost, stale}
}

// SampleOperators: tenant-a and tenant-b renew their registrations, tenant-c
// stopped a minute ago.
func SampleOperators() []camelv1alpha1.IntegrationOperator {
	op := func(id, ns string, heartbeat time.Duration, isDefault bool) camelv1alpha1.IntegrationOperator {
		iop := camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: id, CreationTimestamp: Ago(time.Hour)}}
		iop.Spec.Default = isDefault
		hb := Ago(heartbeat)
		iop.Status = camelv1alpha1.IntegrationOperatorStatus{
			Namespace: ns, Version: "v0.3.0", Leader: id + "-operator-7d9c_1a2b", HeartbeatTime: &hb, StaleAfterSeconds: 6,
		}
		iop.Status.Conditions = []metav1.Condition{
			Condition(camelv1.ConditionReady, metav1.ConditionTrue, "Registered", "registered by the operator in namespace "+ns, time.Hour),
		}
		return iop
	}
	return []camelv1alpha1.IntegrationOperator{
		op("tenant-a", "ops-a", 2*time.Second, false),
		op("tenant-b", "ops-b", 3*time.Second, true),
		op("tenant-c", "ops-c", time.Minute, false),
	}
}

// Objects converts typed objects into client objects.
func Objects[T client.Object](items ...T) []client.Object {
	out := make([]client.Object, len(items))
	for i, it := range items {
		out[i] = it
	}
	return out
}

// ExecMutateCommand runs one command under a root with the shared kube
// flags, as `caravan ARGS...` would, and returns its stdout and stderr.
func ExecMutateCommand(t *testing.T, newCmd func(*cmdutil.KubeFlags, genericiooptions.IOStreams) *cobra.Command, args ...string) (string, string, error) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	root := &cobra.Command{Use: "caravan", SilenceErrors: true, SilenceUsage: true}
	kube := cmdutil.NewKubeFlags()
	kube.AddFlags(root.PersistentFlags())
	root.AddCommand(newCmd(kube, streams))
	root.SetArgs(args)
	root.SetOut(out)
	root.SetErr(errOut)
	err := root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// Unreachable points the commands at a server that does not answer, so a
// test fails if a command contacts the cluster.
var Unreachable = []string{"--server", "https://127.0.0.1:1", "--request-timeout", "1s"}

// AssignedIntegration is an Integration in namespace ns, assigned (and
// labelled) to operatorID, or to none.
func AssignedIntegration(ns, name, operatorID string) *camelv1.Integration {
	it := &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if operatorID != "" {
		it.Annotations = map[string]string{camelv1.OperatorIDAnnotation: operatorID}
		it.Labels = map[string]string{camelv1.OperatorIDLabel: operatorID}
	}
	return it
}

// ControlledByPipe marks it as controlled by the Pipe named pipe.
func ControlledByPipe(it *camelv1.Integration, pipe string) *camelv1.Integration {
	it.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: camelv1.GroupVersion.String(), Kind: "Pipe", Name: pipe, UID: "pipe-uid", Controller: ptr.To(true),
	}}
	return it
}

// RemainingIntegrations names the integrations of namespace ns, sorted.
func RemainingIntegrations(t *testing.T, ns string) []string {
	t.Helper()
	list := &camelv1.IntegrationList{}
	if err := Cluster(t).Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range list.Items {
		names = append(names, it.Name)
	}
	slices.Sort(names)
	return names
}

// RegisteredOperator is the registration of operator id in namespace operators, renewed at heartbeat.
func RegisteredOperator(id string, heartbeat time.Time) *camelv1alpha1.IntegrationOperator {
	iop := &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: id}}
	iop.Status.Namespace = "operators"
	iop.Status.StaleAfterSeconds = 30
	if !heartbeat.IsZero() {
		iop.Status.HeartbeatTime = &metav1.Time{Time: heartbeat}
	}
	return iop
}

// OperatorWithPlatform is the live registration of operator id from namespace ns, and its
// IntegrationPlatform there, whose spec.build.runtimeProvider is provider ("" for none).
func OperatorWithPlatform(ns, id, provider string) []client.Object {
	iop := RegisteredOperator(id, time.Now())
	iop.Status.Namespace = ns
	itp := &camelv1.IntegrationPlatform{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: id}}
	itp.Spec.Build.RuntimeProvider = provider
	return []client.Object{iop, itp}
}

// Running is an integration of operatorID in phase Running, Ready, on image, built
// from the kit named kitName ("" for none).
func Running(ns, name, operatorID, image, kitName string) *camelv1.Integration {
	it := AssignedIntegration(ns, name, operatorID)
	it.Spec.Dependencies = []string{"camel:http"}
	it.Status.Phase, it.Status.Image = camelv1.IntegrationPhaseRunning, image
	it.Status.Conditions = []metav1.Condition{{Type: camelv1.ConditionReady, Status: metav1.ConditionTrue, Reason: "DeploymentReady",
		Message: "1/1 pods ready", LastTransitionTime: metav1.Now()}}
	if kitName != "" {
		it.Status.IntegrationKit = &camelv1.KitReference{Name: kitName}
	}
	return it
}

// Rows reads the rows of a table, each a map from column to cell. A
// column starts where its header does: cells may hold spaces.
func Rows(t *testing.T, table string) []map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	columns := strings.Fields(lines[0])
	var starts []int
	for i, c := range lines[0] {
		if c != ' ' && (i == 0 || lines[0][i-1] == ' ') {
			starts = append(starts, i)
		}
	}
	var out []map[string]string
	for _, l := range lines[1:] {
		row := map[string]string{}
		for i, start := range starts {
			if start >= len(l) || start > 0 && l[start-1] != ' ' {
				t.Fatalf("row %q is not aligned with the header %q", l, lines[0])
			}
			end := len(l)
			if i+1 < len(starts) {
				end = min(starts[i+1], len(l))
			}
			row[columns[i]] = strings.TrimSpace(l[start:end])
		}
		out = append(out, row)
	}
	return out
}

// Names reads the NAME column of a table.
func Names(t *testing.T, table string) []string {
	t.Helper()
	var out []string
	for _, row := range Rows(t, table) {
		name, ok := row["NAME"]
		if !ok {
			t.Fatalf("no NAME column in %q", table)
		}
		out = append(out, name)
	}
	return out
}

// RunTests runs a package's tests, then stops the control plane if a test started it; TestMain
// exits with its result.
func RunTests(m *testing.M) int {
	code := m.Run()
	if clusterEnv != nil {
		if err := clusterEnv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the test control plane:", err)
			code = max(code, 1)
		}
	}
	return code
}

// ReadArchive returns the files of a gzipped tar archive by name.
func ReadArchive(t *testing.T, file string) map[string]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	files := map[string]string{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name] = string(data)
	}
}
