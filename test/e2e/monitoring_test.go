package e2e

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/internal/monitoring"
	"github.com/caravan-dev/caravan/internal/operatorpod"
	"github.com/caravan-dev/caravan/test/harness"
)

// TestThePodMonitorsTokenReadsTheOperatorsMetrics: the monitoring objects' scraper identity,
// applied as the chart and the kustomize base apply it, gets a token from the cluster; the
// Secret and key that the PodMonitor sends read an operator's metrics over HTTPS, as
// Prometheus would.
func TestThePodMonitorsTokenReadsTheOperatorsMetrics(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	op := env.InstallOperator(t, "scraped", env.Namespace(t), harness.OperatorOptions{})
	waitReady(t, op)

	objs, err := monitoring.Objects(ns)
	g.Expect(err).NotTo(HaveOccurred())
	var secretName, secretKey string
	for _, o := range objs {
		switch o := o.(type) {
		case *unstructured.Unstructured: // the PodMonitor and the PrometheusRule, kinds this cluster lacks
			if o.GetKind() == "PodMonitor" {
				endpoints, _, _ := unstructured.NestedSlice(o.Object, "spec", "podMetricsEndpoints")
				g.Expect(endpoints).To(HaveLen(1))
				secretName, _, _ = unstructured.NestedString(endpoints[0].(map[string]any), "authorization", "credentials", "name")
				secretKey, _, _ = unstructured.NestedString(endpoints[0].(map[string]any), "authorization", "credentials", "key")
			}
		default:
			g.Expect(env.Client.Create(ctx, o)).To(Succeed(), "%T %s", o, o.GetName())
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), o) })
		}
	}
	g.Expect(secretName).NotTo(BeEmpty(), "the PodMonitor sends no token")

	t.Log("the cluster fills the token Secret the PodMonitor names")
	secret := &corev1.Secret{}
	g.Eventually(func() ([]byte, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: secretName}, secret)
		return secret.Data[secretKey], err
	}, timeout, poll).ShouldNot(BeEmpty())

	t.Log("that token reads the operator's metrics")
	scraper := operatorpod.NewScraper(string(secret.Data[secretKey]))
	url := env.OperatorMetricsURL(t, op.Namespace, op.ID)
	g.Eventually(func() error { _, err := scraper.Get(ctx, url); return err }, timeout, poll).Should(Succeed())
}
