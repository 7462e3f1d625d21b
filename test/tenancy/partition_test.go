package tenancy

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	installpkg "github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/test/harness"
)

// throughProxy makes operator id's pods reach the API server through p:
// its Deployment gets the proxy's port as KUBERNETES_SERVICE_PORT, which
// a container's own variable overrides as on a kubelet. It waits until a
// pod so configured leads the operator.
func throughProxy(t *testing.T, ns, id string, p *harness.Proxy) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	port := strconv.Itoa(p.Port())
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"operator","env":[`+
		`{"name":"KUBERNETES_SERVICE_PORT","value":%q},{"name":"KUBERNETES_SERVICE_PORT_HTTPS","value":%q}]}]}}}}`, port, port)
	d := &appsv1.Deployment{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: id + "-operator"}, d)).To(Succeed())
	g.Expect(env.Client.Patch(ctx, d, client.RawPatch(types.StrategicMergePatchType, []byte(patch)))).To(Succeed())
	g.Eventually(func() error {
		pods := &corev1.PodList{}
		if err := env.Client.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(installpkg.Labels(id))); err != nil {
			return err
		}
		iop := &camelv1alpha1.IntegrationOperator{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: id}, iop); err != nil {
			return err
		}
		for _, pod := range pods.Items {
			proxied := false
			for _, e := range pod.Spec.Containers[0].Env {
				proxied = proxied || (e.Name == "KUBERNETES_SERVICE_PORT" && e.Value == port)
			}
			if proxied && pod.DeletionTimestamp == nil && strings.HasPrefix(iop.Status.Leader, pod.Name+"_") {
				return nil
			}
		}
		return errors.New("no pod that reaches the API server through the proxy leads the operator yet")
	}, 3*timeout, time.Second).Should(Succeed())
}

// TestAPartitionedOperatorIsTakenOverAndWritesNothingOnceBack cuts operator
// A off the API server (its pod reaches it through a proxy the test cuts)
// and moves A's integrations to B meanwhile. B takes them over only once
// A's registration has expired; when the partition heals, A comes back,
// reconciles what is still its own, and writes nothing more to what
// moved: the audit log shows every write of A's to a moved integration
// received before the partition and before B's first.
func TestAPartitionedOperatorIsTakenOverAndWritesNothingOnceBack(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ensureDefault(t)
	ops, apps := env.Namespace(t), env.Namespace(t)
	install(t, ops, "cut-a", "--heartbeat-interval", "2s")
	install(t, ops, "heir-c")
	u, err := url.Parse(env.Config.Host)
	g.Expect(err).NotTo(HaveOccurred())
	proxy := harness.StartProxy(t, u.Hostname(), u.Host)
	throughProxy(t, ops, "cut-a", proxy)

	moved := createMany(t, apps, "cut-off", "cut-a", 5)
	kept := createMany(t, apps, "kept", "cut-a", 1)
	waitAllRunningUnder(t, append(moved, kept...), "cut-a")

	t.Log("cut A off the API server, and move its integrations to B")
	cutAt := time.Now()
	proxy.Cut(true)
	for _, it := range moved {
		g.Expect(annotate(env.Client, it, "heir-c")).To(Succeed())
	}
	waitAllRunningUnder(t, moved, "heir-c")
	expiry := expiryOf(t, "cut-a")
	t.Logf("B took the %d integrations over %s after the cut (A's registration expired %s after it)",
		len(moved), time.Since(cutAt).Round(time.Second), expiry.Sub(cutAt).Round(time.Second))

	t.Log("heal the partition: A comes back and reconciles what is still its own")
	healedAt := time.Now()
	proxy.Cut(false)
	g.Eventually(func() (bool, error) {
		reg, err := registration("cut-a")
		return reg.Heartbeat.After(healedAt), err
	}, 3*timeout, time.Second).Should(BeTrue(), "A never renewed its registration after the partition healed")
	waitAllRunningUnder(t, kept, "cut-a")
	g.Expect(client.IgnoreNotFound(mergePatch(env.Client, kept[0].DeepCopy(), `{"spec":{"replicas":2}}`))).To(Succeed())
	g.Eventually(func() (int32, error) {
		d := &appsv1.Deployment{}
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(kept[0]), d)
		if d.Spec.Replicas == nil {
			return 0, err
		}
		return *d.Spec.Replicas, err
	}, 3*timeout, time.Second).Should(Equal(int32(2)), "A does not reconcile its own integration after the partition")
	waitAllRunningUnder(t, moved, "heir-c")

	t.Log("the audit log: A wrote nothing to what moved after the cut, and B nothing before A's registration expired")
	tookOverAfter(t, apps, operatorUser(ops, "heir-c"), moved, expiry)
	byA := writesOf(t, apps, operatorUser(ops, "cut-a"))
	for _, it := range moved {
		for _, e := range byA[it.Name] {
			g.Expect(e.Received.Before(cutAt)).To(BeTrue(), "%s: A wrote %s %s/%s at %s, after the cut at %s",
				it.Name, e.Verb, e.ObjectRef.Resource, e.ObjectRef.Subresource, e.Received.Format(time.RFC3339Nano),
				cutAt.Format(time.RFC3339Nano))
		}
	}
}
