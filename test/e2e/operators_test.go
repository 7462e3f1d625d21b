package e2e

import (
	"context"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/test/harness"
)

// TestIntegrationMovesBetweenOperators ports Camel K's multi-operator
// scenario: an integration for an operator that does not run is left
// alone; assigned to operator-1 it runs; moved to operator-2 it runs there
// with the same Deployment and the same pods, none restarted;
// it keeps running when operator-1 stops, and across a restart of
// operator-2 it is not redeployed. Each operator caches only its share.
func TestIntegrationMovesBetweenOperators(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns1, ns2, apps := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	op1 := env.InstallOperator(t, "operator-1", ns1, harness.OperatorOptions{})
	op2 := env.InstallOperator(t, "operator-2", ns2, harness.OperatorOptions{})
	waitReady(t, op1, op2)

	stay1 := newIntegration(apps, "stays-with-1", "operator-1", 1)
	stay2 := newIntegration(apps, "stays-with-2", "operator-2", 1)
	mover := newIntegration(apps, "mover", "operator-x", 4)
	for _, it := range []*camelv1.Integration{stay1, stay2, mover} {
		create(t, it)
	}
	key := client.ObjectKeyFromObject(mover)

	t.Log("an integration for an operator that does not run keeps an empty phase and no children")
	g.Consistently(func() error {
		it, err := getIntegration(key)
		if err != nil {
			return err
		}
		if it.Status.Phase != "" || it.Labels[camelv1.OperatorIDLabel] != "" {
			return errorf("phase %q, label %q", it.Status.Phase, it.Labels[camelv1.OperatorIDLabel])
		}
		if _, err := getDeployment(key); !apierrors.IsNotFound(err) {
			return errorf("a Deployment exists: %v", err)
		}
		cms := &corev1.ConfigMapList{}
		if err := env.Client.List(ctx, cms, client.InNamespace(apps), client.MatchingLabels{camelv1.IntegrationLabel: "mover"}); err != nil {
			return err
		}
		if len(cms.Items) > 0 {
			return errorf("%d ConfigMaps exist", len(cms.Items))
		}
		return nil
	}, 10*time.Second, time.Second).Should(Succeed())

	t.Log("assigned to operator-1, it runs there")
	reassign(t, mover, "operator-1")
	waitRunningUnder(t, key, "operator-1")
	waitRunningUnder(t, client.ObjectKeyFromObject(stay1), "operator-1")
	waitRunningUnder(t, client.ObjectKeyFromObject(stay2), "operator-2")
	before, err := getDeployment(key)
	g.Expect(err).NotTo(HaveOccurred())

	t.Log("moved to operator-2, it runs there with the same Deployment and the same pods, Running throughout")
	pods := watchReadyPods(apps, "mover")
	g.Eventually(pods.Samples, timeout, 10*time.Millisecond).Should(BeNumerically(">=", 3))
	statuses := watchStatus(t, key)
	reassign(t, mover, "operator-2")
	waitRunningUnder(t, key, "operator-2")
	minReady, samples, seen := pods.Stop()
	owners := map[string]bool{}
	for _, st := range statuses.Stop() {
		owners[st.Ownership.Owner] = true
		g.Expect(st.Phase).To(Equal(camelv1.IntegrationPhaseRunning), "a status written during the move: owner %q, conditions %v",
			st.Ownership.Owner, st.Conditions)
		g.Expect(meta.IsStatusConditionTrue(st.Conditions, camelv1.ConditionReady)).To(BeTrue(),
			"a status written during the move: %v", st.Conditions)
	}
	g.Expect(owners).To(HaveKey("operator-2"), "the watch saw no status of the new owner")
	g.Expect(samples).To(BeNumerically(">", 3))
	g.Expect(minReady).To(BeNumerically(">=", 4), "ready pods fell below the replicas during the move")
	g.Expect(seen).To(Equal(4), "the move started new pods: the pod template changed")
	after, err := getDeployment(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after.UID).To(Equal(before.UID), "the Deployment was recreated")
	g.Expect(after.Spec.Template).To(Equal(before.Spec.Template), "the move changed the pod template")
	g.Expect(after.Labels).To(HaveKeyWithValue(camelv1.OperatorIDLabel, "operator-2"))
	g.Expect(after.Generation).To(Equal(before.Generation), "the move made a new generation of the Deployment to roll out")
	moved, err := getIntegration(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(moved.Status.Ownership.Epoch).To(BeNumerically(">=", 2))
	g.Eventually(func() []string { return eventNotes(apps, "mover", "Adopted", "") }, timeout, poll).Should(ContainElement(And(ContainSubstring("by operator operator-2"),
		ContainSubstring("from operator operator-1"))), "the Event of the adoption")
	// operator-1 counts its release once its write returns, which may be
	// after operator-2 acted on the watch event of that write.
	g.Eventually(func() float64 { return metric(op1, "caravan_integration_releases_total") }, timeout, poll).Should(Equal(1.0))
	g.Expect(metric(op2, "caravan_integration_adoptions_total", `after="release"`)).To(Equal(1.0))
	g.Expect(metric(op2, "caravan_integration_adoptions_total", `after="expiry"`)).To(BeZero())
	g.Expect(metric(op2, "caravan_integrations_awaiting_release")).To(BeZero())

	t.Log("each operator's cache holds only its own integrations and children")
	g.Eventually(func() []float64 {
		return []float64{
			metric(op1, "caravan_cached_objects", `kind="Integration"`),
			metric(op2, "caravan_cached_objects", `kind="Integration"`),
			metric(op1, "caravan_cached_objects", `kind="Deployment"`),
			metric(op2, "caravan_cached_objects", `kind="Deployment"`),
		}
	}, timeout, poll).Should(Equal([]float64{1, 2, 1, 2}))

	t.Log("operator-1 stops; the moved integration keeps running under operator-2")
	op1.Stop(t)
	g.Consistently(func() error { return env.RunningUnder(key, "operator-2") }, 5*time.Second, 500*time.Millisecond).Should(Succeed())

	t.Log("operator-2 restarts; nothing is redeployed")
	generations := map[string]int64{}
	for _, name := range []string{"mover", "stays-with-2"} {
		d, err := getDeployment(client.ObjectKey{Namespace: apps, Name: name})
		g.Expect(err).NotTo(HaveOccurred())
		generations[name] = d.Generation
	}
	epoch := moved.Status.Ownership.Epoch
	op2.Stop(t)
	op2.Start(t)
	waitReady(t, op2)
	g.Eventually(func() float64 {
		return metric(op2, "camel_k_reconciliation_duration_seconds_count", `kind="Integration"`)
	}, timeout, poll).Should(BeNumerically(">=", 2), "the restarted operator reconciles its integrations")
	g.Consistently(func() error {
		for name, gen := range generations {
			k := client.ObjectKey{Namespace: apps, Name: name}
			d, err := getDeployment(k)
			if err != nil {
				return err
			}
			if d.Generation != gen {
				return errorf("deployment %s went from generation %d to %d", name, gen, d.Generation)
			}
			if err := env.RunningUnder(k, "operator-2"); err != nil {
				return err
			}
		}
		it, err := getIntegration(key)
		if err != nil {
			return err
		}
		if it.Status.Ownership.Epoch != epoch {
			return errorf("ownership epoch went from %d to %d", epoch, it.Status.Ownership.Epoch)
		}
		return nil
	}, 10*time.Second, time.Second).Should(Succeed())
}

// TestDefaultOperatorAdoptsUnassignedIntegrations: an integration without
// the annotation is left alone while no default operator runs, and is
// adopted by camel-k, the default operator, once it runs.
func TestDefaultOperatorAdoptsUnassignedIntegrations(t *testing.T) {
	g := NewWithT(t)
	opNS, apps := env.Namespace(t), env.Namespace(t)
	other := env.InstallOperator(t, "not-the-default", opNS, harness.OperatorOptions{})
	waitReady(t, other)
	it := newIntegration(apps, "unassigned", "", 1)
	create(t, it)
	key := client.ObjectKeyFromObject(it)
	g.Consistently(func() error {
		got, err := getIntegration(key)
		if err != nil {
			return err
		}
		if got.Annotations[camelv1.OperatorIDAnnotation] != "" || got.Status.Phase != "" {
			return errorf("touched: annotations %v, phase %q", got.Annotations, got.Status.Phase)
		}
		return nil
	}, 5*time.Second, 500*time.Millisecond).Should(Succeed())

	def := env.InstallOperator(t, "camel-k", opNS, harness.OperatorOptions{})
	waitReady(t, def)
	waitRunningUnder(t, key, "camel-k")
	got, err := getIntegration(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Annotations).To(HaveKeyWithValue(camelv1.OperatorIDAnnotation, "camel-k"))
	g.Expect(got.Labels).To(HaveKeyWithValue(camelv1.OperatorIDLabel, "camel-k"))

	t.Log("the default operator's metrics count what it owns and what no registered operator owns")
	create(t, newIntegration(apps, "for-nobody", "nobody-runs-this", 1))
	g.Expect(def.Healthy()).To(BeTrue())
	// The gauge counts the whole cluster, where earlier tests' integrations
	// may linger in namespaces still being deleted: those are subtracted,
	// as the API server lists them at each poll.
	g.Eventually(func() []float64 {
		return []float64{
			metric(def, "caravan_owned_resources", `kind="Integration"`),
			metric(def, "caravan_orphaned_resources", `kind="Integration"`, `reason="NotRegistered"`) -
				unregisteredIntegrationsOutside(t, apps),
			metric(def, "camel_k_integration_first_readiness_seconds_count"),
		}
	}, timeout, poll).Should(Equal([]float64{1, 1, 1}))
	g.Expect(metric(def, "camel_k_reconciliation_duration_seconds_count", `operator_id="camel-k"`, `kind="Integration"`)).
		To(BeNumerically(">=", 1))
	_, reportsOrphans := other.Metric("caravan_orphaned_resources")
	g.Expect(reportsOrphans).To(BeFalse(), "only the default operator counts unregistered ids")
}

// unregisteredIntegrationsOutside counts the integrations of the cluster,
// outside namespace ns, that are assigned to an id no IntegrationOperator
// registers; NaN, which equals nothing, when the API server cannot list them.
func unregisteredIntegrationsOutside(t *testing.T, ns string) float64 {
	t.Helper()
	ctx := context.Background()
	iops := &camelv1alpha1.IntegrationOperatorList{}
	its := &camelv1.IntegrationList{}
	for _, list := range []client.ObjectList{iops, its} {
		if err := env.Client.List(ctx, list); err != nil {
			t.Logf("listing: %v", err)
			return math.NaN()
		}
	}
	registered := map[string]bool{}
	for _, iop := range iops.Items {
		registered[iop.Name] = true
	}
	n := 0
	for _, it := range its.Items {
		if id := ownership.AssignedID(it.Annotations); it.Namespace != ns && id != "" && !registered[id] {
			n++
		}
	}
	return float64(n)
}

// TestOperatorsShareANamespace: two operators with different ids in one
// namespace each elect their own leader, own their own platform and run
// their own integrations.
func TestOperatorsShareANamespace(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, apps := env.Namespace(t), env.Namespace(t)
	a := env.InstallOperator(t, "shared-a", ns, harness.OperatorOptions{})
	b := env.InstallOperator(t, "shared-b", ns, harness.OperatorOptions{})
	waitReady(t, a, b)
	itA := newIntegration(apps, "for-a", "shared-a", 1)
	itB := newIntegration(apps, "for-b", "shared-b", 1)
	create(t, itA)
	create(t, itB)
	waitRunningUnder(t, client.ObjectKeyFromObject(itA), "shared-a")
	waitRunningUnder(t, client.ObjectKeyFromObject(itB), "shared-b")
	for _, id := range []string{"shared-a", "shared-b"} {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: id + "-lock"}, &coordinationv1.Lease{})).To(Succeed())
		itp := &camelv1.IntegrationPlatform{}
		g.Eventually(func() camelv1.IntegrationPlatformPhase {
			_ = env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: id}, itp)
			return itp.Status.Phase
		}, timeout, poll).Should(Equal(camelv1.IntegrationPlatformPhaseReady))
		g.Expect(itp.Annotations).To(HaveKeyWithValue(camelv1.OperatorIDAnnotation, id))
	}
}

// TestDuplicateOperatorIDIsRefused: the same id installed in a second
// namespace behind the CLI's back (its check refuses it) refuses to reconcile and says why, in its log, an Event, a
// Conflict condition and its readiness; it takes over once the first
// operator is gone and its heartbeat has gone stale.
func TestDuplicateOperatorIDIsRefused(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	nsA, nsB, apps := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	first := env.InstallOperator(t, "dup", nsA, harness.OperatorOptions{})
	waitReady(t, first)
	second := env.InstallOperator(t, "dup", nsB, harness.OperatorOptions{Unregistered: true})

	g.Eventually(func() bool {
		return second.LogContains("Refusing to reconcile") &&
			second.LogContains("registered to the live operator in namespace "+nsA)
	}, timeout, poll).Should(BeTrue(), "the refused operator does not say why in its log")
	// The pod's address is published once the process node reports it
	// running, which may come after its first log lines.
	g.Eventually(func() string { _, body := second.Ready(); return body }, timeout, poll).
		Should(ContainSubstring("[-]registration failed"))
	ok, body := second.Ready()
	g.Expect(ok).To(BeFalse(), "the refused operator is ready: %s", body)
	iop := &camelv1alpha1.IntegrationOperator{}
	g.Eventually(func() string {
		_ = env.Client.Get(ctx, client.ObjectKey{Name: "dup"}, iop)
		c := meta.FindStatusCondition(iop.Status.Conditions, camelv1alpha1.ConditionConflict)
		if c == nil || c.Status != "True" {
			return ""
		}
		return c.Message
	}, timeout, poll).Should(ContainSubstring("namespace " + nsB + " refuses"))
	g.Expect(iop.Status.Namespace).To(Equal(nsA))
	g.Eventually(func() bool {
		events := &eventsv1.EventList{}
		_ = env.Client.List(ctx, events)
		for _, e := range events.Items {
			if e.Regarding.Kind == "IntegrationOperator" && e.Regarding.Name == "dup" && e.Reason == "Conflict" {
				return true
			}
		}
		return false
	}, timeout, poll).Should(BeTrue(), "no Conflict Event about the registration")

	it := newIntegration(apps, "dup-app", "dup", 1)
	create(t, it)
	waitRunningUnder(t, client.ObjectKeyFromObject(it), "dup")
	_, reconciled := second.Metric("camel_k_reconciliation_duration_seconds_count", `kind="Integration"`)
	g.Expect(reconciled).To(BeFalse(), "the refused operator reconciled an integration")
	refusedPlatform := &camelv1.IntegrationPlatform{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: nsB, Name: "dup"}, refusedPlatform)).To(Succeed())
	g.Expect(refusedPlatform.Status.Phase).To(BeEmpty(), "the refused operator reconciled its platform")

	t.Log("the first operator dies; the second takes the id over once its heartbeat is stale")
	first.Kill(t)
	waitReady(t, second)
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "dup"}, iop)).To(Succeed())
	g.Expect(iop.Status.Namespace).To(Equal(nsB))
	g.Expect(meta.FindStatusCondition(iop.Status.Conditions, camelv1alpha1.ConditionConflict)).To(BeNil())
	d := &appsv1.Deployment{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(it), d)).To(Succeed())
	generation := d.Generation
	waitRunningUnder(t, client.ObjectKeyFromObject(it), "dup")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(it), d)).To(Succeed())
	g.Expect(d.Generation).To(Equal(generation), "a takeover by the same id must not redeploy")
}

// TestAnInvalidOperatorIDStopsTheOperatorAtStart, whether it comes from
// the flag or from the environment.
func TestAnInvalidOperatorIDStopsTheOperatorAtStart(t *testing.T) {
	g := NewWithT(t)
	kubeconfig := env.Kubeconfig(t, "someone", "system:masters")
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{args: []string{"--operator-id", "Tenant_A"}, want: `--operator-id: invalid operator id "Tenant_A"`},
		{env: "OPERATOR_ID=tenant.a", want: `OPERATOR_ID: invalid operator id "tenant.a"`},
		{env: "KAMEL_OPERATOR_ID=" + strings.Repeat("x", 64), want: "at most 63 characters"},
	} {
		cmd := exec.Command(env.Caravan, append([]string{"operator", "--kubeconfig", kubeconfig, "-n", "default"}, tc.args...)...)
		cmd.Env = append(os.Environ(), tc.env)
		out, err := cmd.CombinedOutput()
		g.Expect(err).To(HaveOccurred(), "the operator started with %v %s", tc.args, tc.env)
		g.Expect(string(out)).To(ContainSubstring(tc.want))
		g.Expect(string(out)).To(ContainSubstring("DNS-1123 label"))
	}
}
