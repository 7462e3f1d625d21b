package integration

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/test/harness"
)

// setBuildTimeout sets the operator's platform's build timeout, and puts
// the one it had back when the test ends.
func setBuildTimeout(t *testing.T, d time.Duration) {
	t.Helper()
	ctx := context.Background()
	itp := &camelv1.IntegrationPlatform{}
	key := client.ObjectKey{Namespace: operatorNamespace, Name: operatorID}
	if err := env.Client.Get(ctx, key, itp); err != nil {
		t.Fatal(err)
	}
	was := itp.Spec.Build.Timeout
	patch := client.MergeFrom(itp.DeepCopy())
	itp.Spec.Build.Timeout = &metav1.Duration{Duration: d}
	if err := env.Client.Patch(ctx, itp, patch); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cur := &camelv1.IntegrationPlatform{}
		if err := env.Client.Get(ctx, key, cur); err != nil {
			return
		}
		patch := client.MergeFrom(cur.DeepCopy())
		cur.Spec.Build.Timeout = was
		_ = env.Client.Patch(ctx, cur, patch)
	})
}

// TestABuildAgainstASlowRegistrySaysSoAndRecovers: behind a proxy that
// holds each chunk of the registry's answers for a second, a build cannot
// finish within the platform's timeout of 3s; its condition says it timed
// out, names the registry and the setting, and the build is retried with
// backoff, a bounded number of times. Once the registry answers at full
// speed again, the next attempt succeeds and the kit is Ready.
func TestABuildAgainstASlowRegistrySaysSoAndRecovers(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	reg := startPlatformRegistry(t)
	proxy := harness.StartProxy(t, "127.0.0.1", reg.Address)
	proxy.SetDelay(time.Second)
	usePlatformRegistry(t, proxy.Address(), "")
	setBuildTimeout(t, 3*time.Second)
	ns := env.Namespace(t)
	it := sourceIntegration(ns, "slowly", "camel:log")
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())

	var b *camelv1.Build
	g.Eventually(last(buildOf(t, ns, it), &b), timeout, poll).Should(And(
		HaveField("Status.Phase", camelv1.BuildPhaseFailed),
		HaveField("Status.Conditions", ContainElement(And(
			HaveField("Type", camelv1.ConditionReady),
			HaveField("Message", And(ContainSubstring("timeout of 3s"), ContainSubstring(proxy.Address()),
				ContainSubstring("spec.build.timeout"))))))))
	failedAt := time.Now()
	attempt := b.Status.Failure.Recovery.Attempt
	t.Logf("attempt %d timed out: %s", attempt, b.Status.GetCondition(camelv1.ConditionReady).Message)

	proxy.SetDelay(0)
	g.Eventually(last(buildOf(t, ns, it), &b), 2*timeout, poll).Should(HaveField("Status.Phase", camelv1.BuildPhaseSucceeded))
	g.Expect(b.Status.Failure.Recovery.Attempt).To(BeNumerically("<=", attempt+2),
		"the build was tried again %d times in %s: retries are bounded, with backoff", b.Status.Failure.Recovery.Attempt-attempt,
		time.Since(failedAt).Round(time.Second))
	g.Eventually(kitKstatus(b), timeout, poll).Should(Equal("Current, Ready True"), "the kit is Ready")
}
