package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/test/harness"
)

// upgradeIntegrationsEnv sets how many integrations the version upgrade
// moves: 10 by default, 200 for the full form the README names.
const upgradeIntegrationsEnv = "CARAVAN_UPGRADE_INTEGRATIONS"

// TestAVersionUpgradeMovesInWavesAndABrokenOneRollsBack: the story the operators are
// for. Operator v1, from an image stamped v1.0.0, runs the integrations; v2, from an
// image stamped v2.0.0, is declared next to it with a canary from v1 in waves of 10%,
// 50% and 100%; once all run under v2, v1 is removed and leaves nothing behind. Then a
// v3 whose platform refuses every integration (a trait default that is wrong) gets a
// canary from v2: its first wave fails, moves back to v2, and the rest never moves.
func TestAVersionUpgradeMovesInWavesAndABrokenOneRollsBack(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	n := upgradeIntegrations(t)
	v1NS, v2NS, v3NS, apps := env.Namespace(t), env.Namespace(t), env.Namespace(t), env.Namespace(t)
	installFleet(t, v2NS, "up-v1", "up-v2", "up-v3")
	v1, v2 := pushVersion(t, "v1.0.0"), pushVersion(t, "v2.0.0")

	t.Logf("operator v1.0.0 runs %d integrations", n)
	declare(t, "up-v1", camelv1alpha1.IntegrationOperatorSpec{Namespace: v1NS, Image: v1, Version: "v1.0.0"})
	g.Eventually(func() error { return declaredReady(client.ObjectKey{Name: "up-v1"}, v1NS) }, 2*timeout, poll).Should(Succeed())
	var names []string
	for i := range n {
		it := newIntegration(apps, fmt.Sprintf("app-%03d", i), "up-v1", 1)
		create(t, it)
		names = append(names, it.Name)
	}
	for _, name := range names {
		waitRunningUnder(t, client.ObjectKey{Namespace: apps, Name: name}, "up-v1")
	}

	t.Log("v2.0.0 is declared next to it with a canary from v1 in waves of 10%, 50% and 100%")
	start := time.Now()
	declare(t, "up-v2", camelv1alpha1.IntegrationOperatorSpec{Namespace: v2NS, Image: v2, Version: "v2.0.0",
		Canary: &camelv1alpha1.CanarySpec{From: "up-v1", Waves: []string{"10%", "50%", "100%"},
			WaveTimeout: &metav1.Duration{Duration: 3 * time.Minute}}})
	g.Eventually(canaryOf("up-v2", camelv1alpha1.CanaryPhaseSucceeded), 4*timeout+time.Duration(n)*time.Second, poll).Should(Succeed())
	t.Logf("the canary of %d integrations took %s", n, time.Since(start).Round(time.Second))
	st, _ := canaryStatus("up-v2")
	g.Expect(st.Canary.Sizes).To(Equal([]int32{int32(math.Ceil(float64(n) / 10)), int32(math.Ceil(float64(n) / 2)), int32(n)}))
	g.Expect(st.Version).To(Equal("v2.0.0"), "the registration of v2")
	for _, name := range names {
		waitRunningUnder(t, client.ObjectKey{Namespace: apps, Name: name}, "up-v2")
	}

	t.Log("v1 is removed and leaves no orphan")
	g.Expect(env.Client.Delete(ctx, &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: "up-v1"}})).To(Succeed())
	g.Eventually(func() []string { return eventNotes("", "up-v1", "Removed", "") }, timeout, poll).Should(ConsistOf(
		And(HavePrefix("operator up-v1 removed from namespace "+v1NS), Not(ContainSubstring("orphans")))))
	for _, name := range names {
		waitRunningUnder(t, client.ObjectKey{Namespace: apps, Name: name}, "up-v2")
	}

	t.Log("a v3 whose platform refuses every integration gets a canary from v2: wave 1 fails and moves back")
	declare(t, "up-v3", camelv1alpha1.IntegrationOperatorSpec{Namespace: v3NS, Image: v2, Version: "v2.0.0"})
	g.Eventually(func() error { return declaredReady(client.ObjectKey{Name: "up-v3"}, v3NS) }, 2*timeout, poll).Should(Succeed())
	platform := &camelv1.IntegrationPlatform{}
	g.Eventually(func() error {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: v3NS, Name: "up-v3"}, platform)
	}, timeout, poll).Should(Succeed())
	patch := client.MergeFrom(platform.DeepCopy())
	platform.Spec.Traits = camelv1.Traits{"container": harness.Raw(map[string]any{"port": "http"})}
	g.Expect(env.Client.Patch(ctx, platform, patch)).To(Succeed())
	cur := &camelv1alpha1.IntegrationOperator{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "up-v3"}, cur)).To(Succeed())
	iopPatch := client.MergeFrom(cur.DeepCopy())
	cur.Spec.Canary = &camelv1alpha1.CanarySpec{From: "up-v2", Waves: []string{"10%", "50%", "100%"},
		WaveTimeout: &metav1.Duration{Duration: 3 * time.Minute}, RollbackOnFailure: true}
	g.Expect(env.Client.Patch(ctx, cur, iopPatch)).To(Succeed())
	g.Eventually(canaryOf("up-v3", camelv1alpha1.CanaryPhaseRolledBack), 4*timeout, poll).Should(Succeed())
	st, _ = canaryStatus("up-v3")
	first := int(math.Ceil(float64(n) / 10))
	g.Expect(st.Canary.Wave).To(BeEquivalentTo(1), "a wave after the failed one ran")
	g.Expect(st.Canary.Current).To(HaveLen(first))
	g.Expect(st.Canary.Message).To(And(ContainSubstring("wave 1/3 failed: under up-v3: integration "),
		ContainSubstring(fmt.Sprintf("the %d of this wave are back on up-v2", first))))
	for _, name := range names {
		waitRunningUnder(t, client.ObjectKey{Namespace: apps, Name: name}, "up-v2")
	}
}

// upgradeIntegrations is how many integrations the version upgrade moves.
func upgradeIntegrations(t *testing.T) int { return integrationsFromEnv(t, upgradeIntegrationsEnv, 10) }

// integrationsFromEnv is the number of integrations the variable name
// asks for (a full form of a test), or def when it is not set.
func integrationsFromEnv(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: give a number of integrations", name, s)
	}
	return n
}

// pushVersion builds the operator image of this tree with version stamped
// and pushes it to the cluster's registry, for this machine's platform; it
// returns the image by digest.
func pushVersion(t *testing.T, version string) string {
	t.Helper()
	admin := env.Kubeconfig(t, "admin", "system:masters")
	out, errOut, err := cli(t, admin, "image", "push", env.Cluster.RegistryAddress+"/caravan/upgrade",
		"--version", version, "--platform", "linux/"+runtime.GOARCH, "--insecure")
	NewWithT(t).Expect(err).NotTo(HaveOccurred(), errOut)
	return strings.TrimSpace(out)
}

// declare creates the IntegrationOperator id with spec, without admission
// policies, which the test cluster does not run.
func declare(t *testing.T, id string, spec camelv1alpha1.IntegrationOperatorSpec) {
	t.Helper()
	spec.Admission = ptr.To(false)
	create(t, &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: id}, Spec: spec})
}
