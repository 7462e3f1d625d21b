package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/image/imagetest"
	"github.com/caravan-dev/caravan/test/harness"
)

// oneDeploymentEach fails unless every integration of names in ns has exactly one
// Deployment, controlled by it.
func oneDeploymentEach(t *testing.T, ns string, names []string) {
	t.Helper()
	list := &appsv1.DeploymentList{}
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, d := range list.Items {
		owner := metav1.GetControllerOf(&d)
		if owner == nil || owner.Kind != "Integration" {
			t.Errorf("Deployment %s is controlled by %v, not by an Integration", d.Name, owner)
			continue
		}
		count[owner.Name]++
	}
	for _, name := range names {
		if count[name] != 1 {
			t.Errorf("integration %s has %d Deployments", name, count[name])
		}
	}
}

// TestAnOperatorKilledDuringABurstLosesNothing: an operator SIGKILLed while integrations
// are being created, with more created while it is down, runs every one of them once it
// is back: each Running under it, with exactly one Deployment.
func TestAnOperatorKilledDuringABurstLosesNothing(t *testing.T) {
	opNS, apps := env.Namespace(t), env.Namespace(t)
	op := env.InstallOperator(t, "fault-burst", opNS, harness.OperatorOptions{})
	waitReady(t, op)
	var names []string
	for i := range 24 {
		if i == 8 {
			t.Log("SIGKILL of the operator with 8 of 24 integrations created")
			op.Kill(t)
		}
		name := fmt.Sprintf("burst-%02d", i)
		names = append(names, name)
		create(t, newIntegration(apps, name, op.ID, 1))
	}
	t.Log("the operator comes back")
	op.Start(t)
	waitReady(t, op)
	for _, name := range names {
		waitRunningUnder(t, client.ObjectKey{Namespace: apps, Name: name}, op.ID)
	}
	oneDeploymentEach(t, apps, names)
}

// TestAHandoffSurvivesTheNewOwnerKilledBetweenReleaseAndAdoption: the new owner is killed
// before it adopts; the previous owner releases; once the new owner is back it adopts,
// takes the same Deployment over in place, and the epoch grows by one.
func TestAHandoffSurvivesTheNewOwnerKilledBetweenReleaseAndAdoption(t *testing.T) {
	g := NewWithT(t)
	opNS, apps := env.Namespace(t), env.Namespace(t)
	from := env.InstallOperator(t, "fault-from", opNS, harness.OperatorOptions{})
	to := env.InstallOperator(t, "fault-to", opNS, harness.OperatorOptions{})
	waitReady(t, from, to)
	it := newIntegration(apps, "moved", from.ID, 2)
	create(t, it)
	key := client.ObjectKeyFromObject(it)
	waitRunningUnder(t, key, from.ID)
	before, err := getIntegration(key)
	g.Expect(err).NotTo(HaveOccurred())
	dep, err := getDeployment(key)
	g.Expect(err).NotTo(HaveOccurred())

	t.Log("SIGKILL of the new owner, then the move")
	to.Kill(t)
	reassign(t, before, to.ID)
	g.Eventually(func() (bool, error) {
		cur, err := getIntegration(key)
		return cur.Status.Ownership.ReleasedAt != nil && cur.Status.Ownership.Owner == from.ID, err
	}, timeout, poll).Should(BeTrue(), "the previous owner releases")
	g.Consistently(func() (string, error) {
		cur, err := getIntegration(key)
		return cur.Status.Ownership.Owner, err
	}, "2s", poll).Should(Equal(from.ID), "nobody adopts while the new owner is down")

	t.Log("the new owner comes back and adopts")
	to.Start(t)
	waitRunningUnder(t, key, to.ID)
	after, err := getIntegration(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after.Status.Ownership.Epoch).To(Equal(before.Status.Ownership.Epoch + 1))
	moved, err := getDeployment(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(moved.UID).To(Equal(dep.UID), "the Deployment was replaced")
	oneDeploymentEach(t, apps, []string{"moved"})
	g.Expect(after.OperatorID()).To(Equal(to.ID))
}

// reassignIntegrationsEnv sets how many integrations the move that an
// operator is killed during has: 20 by default, 100 for the full form the
// README names.
const reassignIntegrationsEnv = "CARAVAN_REASSIGN_INTEGRATIONS"

// TestAnOperatorKilledDuringAReassignLosesNothing: `caravan reassign --from A --to B
// --wait` moves A's integrations and two Pipes; A, which must release each of them, is
// SIGKILLed once a quarter of the integrations are reassigned and stays down past its
// registration's expiry. B takes over what A released and, after the expiry, the rest;
// the command ends well, and every integration and Pipe runs under B, each integration
// with one Deployment and an epoch that grew.
func TestAnOperatorKilledDuringAReassignLosesNothing(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	n := integrationsFromEnv(t, reassignIntegrationsEnv, 20)
	opNS, apps := env.Namespace(t), env.Namespace(t)
	from := env.InstallOperator(t, "fault-rfrom", opNS, harness.OperatorOptions{})
	to := env.InstallOperator(t, "fault-rto", opNS, harness.OperatorOptions{})
	waitReady(t, from, to)
	var names []string
	for i := range n {
		name := fmt.Sprintf("moving-%03d", i)
		names = append(names, name)
		create(t, newIntegration(apps, name, from.ID, 1))
	}
	pipes := []*camelv1.Pipe{harness.NewPipe(apps, "moving-pipe-a", from.ID), harness.NewPipe(apps, "moving-pipe-b", from.ID)}
	for _, p := range pipes {
		create(t, p)
	}
	epochs := map[string]int64{}
	for _, name := range names {
		key := client.ObjectKey{Namespace: apps, Name: name}
		waitRunningUnder(t, key, from.ID)
		it, err := getIntegration(key)
		g.Expect(err).NotTo(HaveOccurred())
		epochs[name] = it.Status.Ownership.Epoch
	}
	for _, p := range pipes {
		g.Eventually(func() error { return bindingReadyUnder(p, from.ID) }, timeout, poll).Should(Succeed())
	}

	t.Logf("caravan reassign of %d integrations and 2 Pipes; SIGKILL of the previous owner once a quarter are reassigned", n)
	admin := env.Kubeconfig(t, "admin", "system:masters")
	type result struct {
		out, errOut string
		err         error
	}
	done := make(chan result, 1)
	go func() {
		out, errOut, err := cli(t, admin, "reassign", "-n", apps, "--from", from.ID, "--to", to.ID, "--wait", "--timeout", "5m")
		done <- result{out, errOut, err}
	}()
	g.Eventually(func() (int, error) {
		list := &camelv1.IntegrationList{}
		err := env.Client.List(ctx, list, client.InNamespace(apps))
		moved := 0
		for _, it := range list.Items {
			if it.Annotations[camelv1.OperatorIDAnnotation] == to.ID {
				moved++
			}
		}
		return moved, err
	}, timeout, 20*time.Millisecond).Should(BeNumerically(">=", n/4))
	from.Kill(t)
	// Down past the expiry of its registration (three heartbeats): B takes
	// over what A did not release before it died.
	time.Sleep(4 * harness.HeartbeatInterval)
	t.Log("the previous owner comes back")
	from.Start(t)

	res := <-done
	g.Expect(res.err).NotTo(HaveOccurred(), "reassign: %s\n%s", res.out, res.errOut)
	for _, name := range names {
		key := client.ObjectKey{Namespace: apps, Name: name}
		waitRunningUnder(t, key, to.ID)
		it, err := getIntegration(key)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(it.Status.Ownership.Epoch).To(BeNumerically(">", epochs[name]), "the epoch of %s did not grow", name)
	}
	for _, p := range pipes {
		g.Eventually(func() error { return bindingReadyUnder(p, to.ID) }, timeout, poll).Should(Succeed())
	}
	oneDeploymentEach(t, apps, append(names, "moving-pipe-a", "moving-pipe-b"))
}

// TestTheControlPlaneKilledAndRestartedLosesNothing: etcd and the kube-apiserver are
// SIGKILLed and started again; once the API server is back, the operator reconciles what
// changes after it (a new integration, a scaled one) and reports Ready, its caches
// re-synced.
func TestTheControlPlaneKilledAndRestartedLosesNothing(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	opNS, apps := env.Namespace(t), env.Namespace(t)
	op := env.InstallOperator(t, "fault-cp", opNS, harness.OperatorOptions{})
	waitReady(t, op)
	before := newIntegration(apps, "before", op.ID, 1)
	create(t, before)
	waitRunningUnder(t, client.ObjectKeyFromObject(before), op.ID)

	t.Log("SIGKILL of kube-apiserver and etcd, then both start again")
	g.Expect(env.Cluster.Kill("kube-apiserver")).To(Succeed())
	g.Expect(env.Cluster.Kill("etcd")).To(Succeed())
	g.Expect(env.Cluster.Restart(ctx, "etcd", true)).To(Succeed())
	g.Expect(env.Cluster.Restart(ctx, "kube-apiserver", true)).To(Succeed())

	t.Log("what changes once it is back is reconciled")
	after := newIntegration(apps, "after", op.ID, 1)
	create(t, after)
	cur, err := getIntegration(client.ObjectKeyFromObject(before))
	g.Expect(err).NotTo(HaveOccurred())
	patch := client.MergeFrom(cur.DeepCopy())
	cur.Spec.Replicas = ptr.To[int32](2)
	g.Expect(env.Client.Patch(ctx, cur, patch)).To(Succeed())
	waitRunningUnder(t, client.ObjectKeyFromObject(after), op.ID)
	waitRunningUnder(t, client.ObjectKeyFromObject(before), op.ID)
	waitReady(t, op)
	oneDeploymentEach(t, apps, []string{"before", "after"})
	restarts := int32(0)
	for _, p := range op.Pods(t) {
		for _, cs := range p.Status.ContainerStatuses {
			restarts += cs.RestartCount
		}
	}
	t.Logf("the operator's container restarted %d times during the outage", restarts)
}

// TestAnOperatorKilledDuringKitBuildsMakesOneKitPerDependencySet: an operator SIGKILLed
// while the kits of nine integrations over three dependency sets build runs every one of
// them once it is back, on exactly one Ready kit per dependency set, each integration
// with one Deployment.
func TestAnOperatorKilledDuringKitBuildsMakesOneKitPerDependencySet(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	opNS, apps := env.Namespace(t), env.Namespace(t)
	reg := startRegistry(t)
	imagetest.PushBase(t, reg, baseRepository)
	op := env.InstallOperator(t, "fault-build", opNS, harness.OperatorOptions{})
	waitReady(t, op)
	env.UsePlatformRegistry(t, opNS, op.ID, camelv1.RegistrySpec{Address: reg.Address, Insecure: true}, baseRepository+":latest")
	sets := [][]string{{"camel:timer", "camel:log"}, {"camel:timer", "camel:http"}, {"camel:cron", "camel:log"}}
	var names []string
	for i := range 9 {
		it := newIntegration(apps, fmt.Sprintf("built-%d", i), op.ID, 1)
		delete(it.Spec.Traits, "container")
		it.Spec.Dependencies = sets[i%len(sets)]
		create(t, it)
		names = append(names, it.Name)
	}
	g.Eventually(func() (int, error) {
		builds := &camelv1.BuildList{}
		err := env.Client.List(ctx, builds, client.InNamespace(apps))
		return len(builds.Items), err
	}, timeout, poll).Should(BeNumerically(">", 0), "no build started")

	t.Log("SIGKILL of the operator while its kits build")
	op.Kill(t)
	op.Start(t)
	waitReady(t, op)
	for _, name := range names {
		waitRunningUnder(t, client.ObjectKey{Namespace: apps, Name: name}, op.ID)
	}
	oneDeploymentEach(t, apps, names)
	kits := &camelv1.IntegrationKitList{}
	g.Expect(env.Client.List(ctx, kits, client.InNamespace(apps))).To(Succeed())
	g.Expect(kits.Items).To(HaveLen(len(sets)), "one kit per dependency set")
	for _, k := range kits.Items {
		g.Expect(k.Status.Phase).To(Equal(camelv1.IntegrationKitPhaseReady), "kit %s", k.Name)
	}
	builds := &camelv1.BuildList{}
	g.Expect(env.Client.List(ctx, builds, client.InNamespace(apps))).To(Succeed())
	g.Expect(builds.Items).To(HaveLen(len(sets)), "one build per kit")
}
