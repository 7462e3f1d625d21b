package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/test/harness"
)

// TestADeclaredCanaryMovesInWavesAndRollsBackAFailedOne: spec.canary on a declared
// operator's IntegrationOperator makes the fleet controller move what the selector picks
// from another operator, wave by wave, each wave once the one before runs there, with
// its progress in status.canary, as `caravan reassign --waves` does; a canary to an
// operator that cannot run them fails its first wave, moves it back, and stops.
func TestADeclaredCanaryMovesInWavesAndRollsBackAFailedOne(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	opNS, apps, elsewhere := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	installFleet(t, opNS, "canary-b", "canary-broken")
	a := env.InstallOperator(t, "canary-a", opNS, harness.OperatorOptions{})
	waitReady(t, a)
	waitRegistered(t, a)
	team, other := twoTeams(t, apps, "canary-a")

	t.Log("a declared operator with spec.canary takes team a from canary-a in waves of 2, 4 and the rest")
	create(t, &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: "canary-b"},
		Spec: camelv1alpha1.IntegrationOperatorSpec{Namespace: opNS, Admission: ptr.To(false),
			Canary: &camelv1alpha1.CanarySpec{From: "canary-a", Waves: []string{"2", "4"},
				Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}},
				WaveTimeout: &metav1.Duration{Duration: 2 * time.Minute}}}})
	done := canaryOf("canary-b", camelv1alpha1.CanaryPhaseSucceeded)
	g.Eventually(done, 4*timeout, poll).Should(Succeed())
	st, _ := canaryStatus("canary-b")
	g.Expect(st.Canary.Sizes).To(Equal([]int32{2, 4, 6}))
	g.Expect(st.Canary.Total).To(BeEquivalentTo(6))
	g.Expect(st.Canary.Moved).To(BeEquivalentTo(6))
	g.Expect(st.Canary.Message).To(Equal("moved 6 from canary-a in 3 waves"))
	g.Expect(meta.IsStatusConditionTrue(st.Conditions, camelv1alpha1.ConditionCanary)).To(BeTrue())
	for _, name := range team {
		waitRunningUnder(t, client.ObjectKey{Namespace: apps, Name: name}, "canary-b")
	}
	stayed, err := getIntegration(client.ObjectKeyFromObject(other))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(stayed.OperatorID()).To(Equal("canary-a"), "the selector team=a moved team b's integration")

	t.Log("a canary to an operator that cannot run them rolls its first wave back and stops")
	create(t, &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: "canary-broken"},
		Spec: camelv1alpha1.IntegrationOperatorSpec{Namespace: opNS, Admission: ptr.To(false), WatchNamespaces: []string{elsewhere},
			Canary: &camelv1alpha1.CanarySpec{From: "canary-b", Waves: []string{"34%", "100%"},
				WaveTimeout: &metav1.Duration{Duration: 15 * time.Second}, RollbackOnFailure: true}}})
	g.Eventually(canaryOf("canary-broken", camelv1alpha1.CanaryPhaseRolledBack), 4*timeout, poll).Should(Succeed())
	st, _ = canaryStatus("canary-broken")
	g.Expect(st.Canary.Wave).To(BeEquivalentTo(1), "the second wave ran")
	g.Expect(st.Canary.Moved).To(BeEquivalentTo(0))
	g.Expect(st.Canary.Current).To(HaveLen(3))
	g.Expect(st.Canary.Failure).To(Equal("wave 1/2 failed: 0/3 running under canary-broken after 15s; 0 moved to canary-broken in earlier waves"))
	g.Expect(st.Canary.Message).To(Equal(st.Canary.Failure + "; the 3 of this wave are back on canary-b"))
	stalled := meta.FindStatusCondition(st.Conditions, camelv1.ConditionStalled)
	g.Expect(stalled).NotTo(BeNil())
	g.Expect(stalled.Reason).To(Equal("RolledBack"))
	for _, name := range team {
		waitRunningUnder(t, client.ObjectKey{Namespace: apps, Name: name}, "canary-b")
	}

	t.Log("a bad spec.canary is Stalled and moves nothing")
	cur := &camelv1alpha1.IntegrationOperator{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "canary-broken"}, cur)).To(Succeed())
	patch := client.MergeFrom(cur.DeepCopy())
	cur.Spec.Canary.Waves = []string{"10%", "50%"}
	g.Expect(env.Client.Patch(ctx, cur, patch)).To(Succeed())
	g.Eventually(func() error {
		st, err := canaryStatus("canary-broken")
		if err != nil {
			return err
		}
		c := meta.FindStatusCondition(st.Conditions, camelv1alpha1.ConditionCanary)
		if st.Canary == nil || st.Canary.Phase != camelv1alpha1.CanaryPhaseFailed || c == nil || c.Reason != "InvalidCanary" {
			return errorf("canary %+v, condition %+v", st.Canary, c)
		}
		if c.Message != "spec.canary: waves: waves \"10%,50%\" end at 50%: the last wave of percentages is 100%" {
			return errorf("message %q", c.Message)
		}
		return nil
	}, timeout, poll).Should(Succeed())
	for _, name := range team {
		it, err := getIntegration(client.ObjectKey{Namespace: apps, Name: name})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(it.OperatorID()).To(Equal("canary-b"), "a bad canary moved %s", name)
	}
}

// canaryStatus is the status of IntegrationOperator id.
func canaryStatus(id string) (camelv1alpha1.IntegrationOperatorStatus, error) {
	iop := &camelv1alpha1.IntegrationOperator{}
	err := env.Client.Get(context.Background(), client.ObjectKey{Name: id}, iop)
	return iop.Status, err
}

// canaryOf checks that the canary of operator id reached phase.
func canaryOf(id string, phase camelv1alpha1.CanaryPhase) func() error {
	return func() error {
		st, err := canaryStatus(id)
		if err != nil {
			return err
		}
		if st.Canary == nil || st.Canary.Phase != phase {
			return errorf("canary of %s: %+v; conditions %v", id, st.Canary, st.Conditions)
		}
		return nil
	}
}

// installFleet installs the fleet controller with `caravan install --fleet`,
// in a namespace of its own; when the test ends it deletes the declared
// operators ids, waits until the fleet has removed them, and uninstalls it.
// A failed test logs the pods of the fleet and of opNS, the declared
// operators' namespace.
func installFleet(t *testing.T, opNS string, ids ...string) {
	t.Helper()
	ctx := context.Background()
	admin := env.Kubeconfig(t, "admin", "system:masters")
	fleetNS := env.Namespace(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("pods of the fleet controller and the declared operators:\n%s\n%s", podLogs(fleetNS), podLogs(opNS))
		}
		for _, id := range ids {
			iop := &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: id}}
			_ = env.Client.Delete(ctx, iop)
			NewWithT(t).Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(iop), iop)) },
				timeout, poll).Should(BeTrue(), "operator %s was not removed", id)
		}
		if _, errOut, err := cli(t, admin, "uninstall", "-n", fleetNS, "--fleet"); err != nil {
			t.Errorf("uninstalling the fleet controller: %v: %s", err, errOut)
		}
	})
	out, errOut, err := cli(t, admin, "install", "--skip-kamelets", "-n", fleetNS, "--fleet", "--wait",
		"--heartbeat-interval", harness.HeartbeatInterval.String())
	NewWithT(t).Expect(err).NotTo(HaveOccurred(), "%s\n%s", out, errOut)
}
