package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/scheme"
)

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

// testNow is the clock of every printing test.
var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// ago is a time d before testNow.
func ago(d time.Duration) metav1.Time { return metav1.NewTime(testNow.Add(-d)) }

// assertGolden compares got with testdata/<name>, or rewrites the file
// with -update.
func assertGolden(t *testing.T, name, got string) {
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
		t.Fatalf("reading %s (run go test ./internal/cli -update to create it): %v", path, err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run go test ./internal/cli -update after checking it):\n--- got\n%s--- want\n%s", path, got, want)
	}
}

func condition(t string, status metav1.ConditionStatus, reason, message string, since time.Duration) metav1.Condition {
	return metav1.Condition{Type: t, Status: status, Reason: reason, Message: message, LastTransitionTime: ago(since)}
}

func objectMeta(ns, name, operatorID string, created time.Duration) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: ago(created), UID: types.UID("uid-" + name)}
	if operatorID != "" {
		m.Annotations = map[string]string{camelv1.OperatorIDAnnotation: operatorID}
		m.Labels = map[string]string{camelv1.OperatorIDLabel: operatorID}
	}
	return m
}

// testIntegrations covers each column: a running integration with a kit,
// one building, an unassigned one without status, one for an operator
// that is not registered and one for an operator that went stale.
func testIntegrations() []*camelv1.Integration {
	running := &camelv1.Integration{ObjectMeta: objectMeta("apps", "timer-to-log", "tenant-a", 5*time.Minute)}
	running.Spec.Replicas = ptr.To[int32](2)
	running.Status = camelv1.IntegrationStatus{
		Phase: camelv1.IntegrationPhaseRunning, Image: "registry.local/kits/kit-abc@sha256:0123", Digest: "v1-9f8e",
		IntegrationKit: &camelv1.KitReference{Name: "kit-abc"}, Replicas: ptr.To[int32](2),
		Ownership: camelv1.Ownership{Owner: "tenant-a", Epoch: 1},
	}
	running.Status.Conditions = []metav1.Condition{
		condition(camelv1.ConditionReady, metav1.ConditionTrue, "DeploymentReady", "2/2 pods ready, 2 updated", 4*time.Minute),
	}
	building := &camelv1.Integration{ObjectMeta: objectMeta("apps", "building", "tenant-b", 3*time.Hour)}
	building.Status.Phase = camelv1.IntegrationPhaseBuildingKit
	building.Status.Ownership = camelv1.Ownership{Owner: "tenant-b", Epoch: 3}
	building.Status.Conditions = []metav1.Condition{
		condition(camelv1.ConditionReady, metav1.ConditionFalse, "KitNotReady", "waiting for kit kit-def", time.Minute),
	}
	unassigned := &camelv1.Integration{ObjectMeta: objectMeta("apps", "fresh", "", 40*time.Second)}
	lost := &camelv1.Integration{ObjectMeta: objectMeta("other", "lost", "gone", 49*time.Hour)}
	stale := &camelv1.Integration{ObjectMeta: objectMeta("other", "left-behind", "tenant-c", 26*time.Hour)}
	stale.Status.Phase = camelv1.IntegrationPhaseRunning
	stale.Status.Ownership = camelv1.Ownership{Owner: "tenant-c", Epoch: 1}
	return []*camelv1.Integration{running, building, unassigned, lost, stale}
}

// testOperators: tenant-a and tenant-b renew their registrations, tenant-c
// stopped a minute ago.
func testOperators() []camelv1alpha1.IntegrationOperator {
	op := func(id, ns string, heartbeat time.Duration, isDefault bool) camelv1alpha1.IntegrationOperator {
		iop := camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: id, CreationTimestamp: ago(time.Hour)}}
		iop.Spec.Default = isDefault
		hb := ago(heartbeat)
		iop.Status = camelv1alpha1.IntegrationOperatorStatus{
			Namespace: ns, Version: "v0.3.0", Leader: id + "-operator-7d9c_1a2b", HeartbeatTime: &hb, StaleAfterSeconds: 6,
		}
		iop.Status.Conditions = []metav1.Condition{
			condition(camelv1.ConditionReady, metav1.ConditionTrue, "Registered", "registered by the operator in namespace "+ns, time.Hour),
		}
		return iop
	}
	return []camelv1alpha1.IntegrationOperator{
		op("tenant-a", "ops-a", 2*time.Second, false),
		op("tenant-b", "ops-b", 3*time.Second, true),
		op("tenant-c", "ops-c", time.Minute, false),
	}
}

func objects[T client.Object](items ...T) []client.Object {
	out := make([]client.Object, len(items))
	for i, it := range items {
		out[i] = it
	}
	return out
}

func TestAgeIsKubectlStyle(t *testing.T) {
	cases := map[time.Duration]string{
		40 * time.Second: "40s", 5 * time.Minute: "5m", 3 * time.Hour: "3h", 48 * time.Hour: "2d", 49 * time.Hour: "2d1h", 400 * 24 * time.Hour: "400d",
	}
	for d, want := range cases {
		if got := age(testNow.Add(-d), testNow); got != want {
			t.Errorf("age of %s: got %q, want %q", d, got, want)
		}
	}
	if got := age(time.Time{}, testNow); got != "<unknown>" {
		t.Errorf("age of an unset time: got %q", got)
	}
}

func TestTableCellsStayOnOneLine(t *testing.T) {
	tb := newTable("A", "B")
	tb.add("x", "two\nlines\tand a tab")
	var out bytes.Buffer
	if err := tb.write(&out, "  "); err != nil {
		t.Fatal(err)
	}
	want := "  A   B\n  x   two lines and a tab\n"
	if out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
}

func TestValidateOutputNamesTheSupportedFormats(t *testing.T) {
	if err := validateOutput("yaml", outputYAML, outputJSON); err != nil {
		t.Fatal(err)
	}
	if err := validateOutput("", outputYAML); err != nil {
		t.Fatal(err)
	}
	err := validateOutput("table", outputYAML, outputJSON)
	if err == nil || !strings.Contains(err.Error(), `unsupported output format "table": use one of yaml, json`) {
		t.Fatalf("got %v", err)
	}
}

func TestPrintObjects(t *testing.T) {
	its := testIntegrations()
	its[0].ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "caravan", Operation: metav1.ManagedFieldsOperationApply}}
	for _, tc := range []struct {
		name   string
		format string
		objs   []client.Object
		single bool
	}{
		{name: "get/one-integration.yaml", format: outputYAML, objs: objects(its[0]), single: true},
		{name: "get/integrations-list.json", format: outputJSON, objs: objects(its[0], its[2])},
		{name: "get/integrations.name", format: outputName, objs: objects(its...)},
		{name: "get/empty-list.yaml", format: outputYAML},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := printObjects(&out, tc.format, scheme.New(), tc.objs, tc.single); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(out.String(), "managedFields") {
				t.Error("managed fields are printed")
			}
			assertGolden(t, tc.name, out.String())
		})
	}
}
