package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/config/kamelets"
	"github.com/caravan-dev/caravan/test/harness"
)

// bindingStatus reads the status of a Pipe or a KameletBinding.
func bindingStatus(obj client.Object) (camelv1.PipeStatus, error) {
	err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
	switch b := obj.(type) {
	case *camelv1.Pipe:
		return b.Status, err
	case *camelv1alpha1.KameletBinding:
		return b.Status, err
	}
	return camelv1.PipeStatus{}, fmt.Errorf("%T is not a binding", obj)
}

// bindingReadyUnder checks that the binding is Ready with its Integration
// Running under operatorID, which carries the binding's assignment.
func bindingReadyUnder(obj client.Object, operatorID string) error {
	key := client.ObjectKeyFromObject(obj)
	if err := env.RunningUnder(key, operatorID); err != nil {
		return err
	}
	it, err := getIntegration(key)
	if err != nil {
		return err
	}
	if got := it.Annotations[camelv1.OperatorIDAnnotation]; got != operatorID {
		return fmt.Errorf("integration %s is assigned to %q", key, got)
	}
	st, err := bindingStatus(obj)
	if err != nil {
		return err
	}
	if st.Phase != camelv1.PipePhaseReady || !meta.IsStatusConditionTrue(st.Conditions, camelv1.ConditionReady) {
		return fmt.Errorf("binding %s: phase %q, conditions %v", key, st.Phase, st.Conditions)
	}
	if st.Replicas == nil || *st.Replicas != 1 || st.Selector != camelv1.IntegrationLabel+"="+key.Name {
		return fmt.Errorf("binding %s: replicas %v, selector %q", key, st.Replicas, st.Selector)
	}
	return nil
}

// reassignBinding changes a binding's operator-id annotation, as kubectl
// annotate --overwrite does.
func reassignBinding(t *testing.T, obj client.Object, operatorID string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, camelv1.OperatorIDAnnotation, operatorID)
	if err := env.Client.Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("reassigning %s to %s: %v", obj.GetName(), operatorID, err)
	}
}

// TestPipeAndKameletBindingReachReady: `caravan install` carries no Kamelet, and has the platform
// opt out of the catalog with --skip-kamelets; Kamelets put, unassigned, into the operator's
// namespace (as the catalog puts them: TestAYAMLRouteRunsOnARealJVM) are validated there by the
// operator; a Pipe and a KameletBinding of another namespace, annotated for that operator, find
// them there and reach Ready with their Integration Running under it.
func TestPipeAndKameletBindingReachReady(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	admin := env.Kubeconfig(t, "admin", "system:masters")
	opNS, apps := env.Namespace(t), env.Namespace(t)

	t.Log("--dry-run shows no Kamelet, and a platform that opts out of the catalog with --skip-kamelets")
	out, _, err := cli(t, admin, "install", "-n", opNS, "-x", "pipe-ready", "--dry-run", "-o", "yaml")
	g.Expect(err).NotTo(HaveOccurred())
	// A document of its own starts with its kind at the margin; the CRDs name Kamelet indented.
	noKamelet := Not(MatchRegexp(`(?m)^kind: Kamelet$`))
	g.Expect(out).To(And(MatchRegexp(`(?m)^kind: IntegrationPlatform$`), noKamelet, Not(ContainSubstring("catalog: false"))))
	out, _, err = cli(t, admin, "install", "-n", opNS, "-x", "pipe-ready", "--dry-run", "-o", "yaml", "--skip-kamelets")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(And(ContainSubstring("catalog: false"), noKamelet))

	// Resolve the kinds before the install re-applies the CRDs: while it
	// does, discovery may briefly miss them.
	g.Expect(env.Client.List(ctx, &camelv1.PipeList{}, client.InNamespace(apps))).To(Succeed())
	g.Expect(env.Client.List(ctx, &camelv1alpha1.KameletBindingList{}, client.InNamespace(apps))).To(Succeed())
	uninstallOnCleanup(t, admin, opNS, "pipe-ready")
	out, errOut, err := cli(t, admin, "install", "-n", opNS, "-x", "pipe-ready", "--wait", "--skip-kamelets")
	g.Expect(err).NotTo(HaveOccurred(), "%s\n%s", out, errOut)
	catalog, err := kamelets.Catalog()
	g.Expect(err).NotTo(HaveOccurred())
	for _, want := range catalog {
		want.Namespace = opNS
		create(t, want)
		k := &camelv1.Kamelet{}
		g.Eventually(func() (camelv1.KameletPhase, error) {
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: opNS, Name: want.Name}, k)
			return k.Status.Phase, err
		}, timeout, poll).Should(Equal(camelv1.KameletPhaseReady), "kamelet %s", want.Name)
		g.Expect(k.Annotations).NotTo(HaveKey(camelv1.OperatorIDAnnotation), "catalog Kamelets are shared")
		g.Expect(k.Labels).NotTo(HaveKey(camelv1.OperatorIDLabel))
	}

	p := harness.NewPipe(apps, "pipe-ticker", "pipe-ready")
	old := harness.NewPipe(apps, "binding-ticker", "pipe-ready")
	kb := &camelv1alpha1.KameletBinding{ObjectMeta: old.ObjectMeta, Spec: old.Spec}
	create(t, p)
	create(t, kb)
	for _, b := range []client.Object{p, kb} {
		g.Eventually(func() error { return bindingReadyUnder(b, "pipe-ready") }, timeout, poll).Should(Succeed())
	}
}

// TestPipeScopedBindings ports Camel K's "scoped bindings" scenario: a
// binding annotated for an operator that does not run creates nothing;
// re-annotated to a running operator, its Integration appears with the
// inherited annotation and runs; re-annotated to a second running
// operator, the Integration moves there: new owner, same Deployment.
func TestPipeScopedBindings(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	nsA, nsB, apps := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	opA := env.InstallOperator(t, "pipe-scoped-a", nsA, harness.OperatorOptions{Verbosity: 1})
	opB := env.InstallOperator(t, "pipe-scoped-b", nsB, harness.OperatorOptions{Verbosity: 1})
	waitReady(t, opA, opB)
	catalog, err := kamelets.Catalog()
	g.Expect(err).NotTo(HaveOccurred())
	for _, k := range catalog {
		k.Namespace = apps
		create(t, k)
	}

	p := harness.NewPipe(apps, "scoped", "pipe-not-running")
	create(t, p)
	key := client.ObjectKeyFromObject(p)
	t.Cleanup(func() {
		if t.Failed() {
			dumpBinding(t, p, opA, opB)
		}
	})

	t.Log("annotated for an operator that does not run: no Integration, no status")
	g.Consistently(func() error {
		if err := env.Client.Get(ctx, key, &camelv1.Integration{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("an Integration exists (error %v)", err)
		}
		st, err := bindingStatus(p)
		if err != nil {
			return err
		}
		if st.Phase != "" || len(st.Conditions) > 0 {
			return fmt.Errorf("status written: %+v", st)
		}
		return nil
	}, 10*time.Second, time.Second).Should(Succeed())

	t.Log("re-annotated for operator A, its Integration appears there with the inherited annotation and runs")
	reassignBinding(t, p, "pipe-scoped-a")
	g.Eventually(func() error { return bindingReadyUnder(p, "pipe-scoped-a") }, timeout, poll).Should(Succeed())
	it, err := getIntegration(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(metav1.IsControlledBy(it, p)).To(BeTrue())
	before, err := getDeployment(key)
	g.Expect(err).NotTo(HaveOccurred())

	t.Log("re-annotated for operator B, the Integration moves: B owns it, the Deployment is the same")
	reassignBinding(t, p, "pipe-scoped-b")
	g.Eventually(func() error { return bindingReadyUnder(p, "pipe-scoped-b") }, timeout, poll).Should(Succeed())
	moved, err := getIntegration(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(moved.UID).To(Equal(it.UID), "the Integration was recreated")
	g.Expect(moved.Status.Ownership.Owner).To(Equal("pipe-scoped-b"))
	g.Expect(moved.Status.Ownership.Epoch).To(BeNumerically(">", it.Status.Ownership.Epoch))
	g.Expect(moved.Labels).To(HaveKeyWithValue(camelv1.OperatorIDLabel, "pipe-scoped-b"))
	after, err := getDeployment(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after.UID).To(Equal(before.UID), "the Deployment was recreated")

	t.Log("operator A has let go of the Pipe and its Integration; it does not pull them back")
	g.Eventually(func() []float64 {
		return []float64{
			metric(opA, "caravan_cached_objects", `kind="Pipe"`),
			metric(opA, "caravan_cached_objects", `kind="Integration"`),
			metric(opB, "caravan_cached_objects", `kind="Pipe"`),
			metric(opB, "caravan_cached_objects", `kind="Integration"`),
		}
	}, timeout, poll).Should(Equal([]float64{0, 0, 1, 1}))
	g.Consistently(func() error {
		got, err := getIntegration(key)
		if err != nil {
			return err
		}
		if id := got.Annotations[camelv1.OperatorIDAnnotation]; id != "pipe-scoped-b" || got.Status.Ownership.Owner != id {
			return fmt.Errorf("integration assigned to %q, owned by %q", id, got.Status.Ownership.Owner)
		}
		return nil
	}, 5*time.Second, 500*time.Millisecond).Should(Succeed())
}

// dumpBinding logs what a failed binding test needs to be understood: the
// binding and its Integration as the API server holds them, and every line
// of the operators' logs that names the binding.
func dumpBinding(t *testing.T, b client.Object, ops ...*harness.Operator) {
	key := client.ObjectKeyFromObject(b)
	objs := []client.Object{b.DeepCopyObject().(client.Object), &camelv1.Integration{}}
	for _, obj := range objs {
		if err := env.Client.Get(context.Background(), key, obj); err != nil {
			t.Logf("reading %T %s: %v", obj, key, err)
			continue
		}
		obj.SetManagedFields(nil)
		data, _ := yaml.Marshal(obj)
		t.Logf("%T %s:\n%s", obj, key, data)
	}
	for _, op := range ops {
		t.Logf("lines of operator %s's log that name %s:\n%s", op.ID, key.Name, op.LogLines(key.Name))
	}
}
