package integration

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/render"
	"github.com/caravan-dev/caravan/test/harness"
)

func podMonitor() *unstructured.Unstructured {
	pm := &unstructured.Unstructured{}
	pm.SetGroupVersionKind(render.PodMonitorGVK)
	return pm
}

// TestThePrometheusTraitMakesAPodMonitorAndRemovesItWhenOff: where the cluster serves the
// PodMonitor kind, the prometheus trait makes a PodMonitor of the integration's name that
// scrapes the container's metrics port, labelled with podMonitorLabels and the operator's
// id and controlled by the integration; with podMonitor: false it goes, and the pods are
// still annotated for scraping.
func TestThePrometheusTraitMakesAPodMonitorAndRemovesItWhenOff(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	it := harness.NewIntegration(ns, "scraped", operatorID, 1)
	it.Spec.Traits["prometheus"] = harness.Raw(map[string]any{"enabled": true, "podMonitorLabels": []string{"release=monitoring"}})
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	key := client.ObjectKeyFromObject(it)

	pm := podMonitor()
	g.Eventually(func() error { return env.Client.Get(ctx, key, pm) }, timeout, poll).Should(Succeed())
	g.Expect(pm.GetLabels()).To(And(HaveKeyWithValue("release", "monitoring"), HaveKeyWithValue(camelv1.OperatorIDLabel, operatorID)))
	stored := get(t, key, &camelv1.Integration{})
	g.Expect(metav1.IsControlledBy(pm, stored)).To(BeTrue())
	selector, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels")
	g.Expect(selector).To(Equal(map[string]string{camelv1.IntegrationLabel: "scraped"}))
	endpoints, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
	g.Expect(endpoints).To(HaveLen(1))
	endpoint := endpoints[0].(map[string]any)
	g.Expect(endpoint).To(HaveKeyWithValue("path", "/observe/metrics"))

	t.Log("the PodMonitor scrapes a port the container declares")
	dep := &appsv1.Deployment{}
	g.Eventually(func() error { return env.Client.Get(ctx, key, dep) }, timeout, poll).Should(Succeed())
	g.Expect(dep.Spec.Template.Spec.Containers[0].Ports).To(ContainElement(HaveField("Name", endpoint["port"])))

	t.Log("with podMonitor: false the PodMonitor goes and the pods stay annotated")
	setTrait(t, key, "prometheus", map[string]any{"enabled": true, "podMonitor": false})
	g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, key, podMonitor())) },
		timeout, poll).Should(BeTrue(), "the PodMonitor stays with podMonitor: false")
	g.Expect(get(t, key, &appsv1.Deployment{}).Spec.Template.Annotations).To(HaveKeyWithValue("prometheus.io/scrape", "true"))
}

// TestAPodMonitorLabelTheOperatorSetsIsBadInput: podMonitorLabels may not set the
// operator's camel.apache.org/ labels; the integration is in Error, naming the field.
func TestAPodMonitorLabelTheOperatorSetsIsBadInput(t *testing.T) {
	g := NewWithT(t)
	ns := env.Namespace(t)
	it := harness.NewIntegration(ns, "relabelled", operatorID, 1)
	it.Spec.Traits["prometheus"] = harness.Raw(map[string]any{"enabled": true,
		"podMonitorLabels": []string{camelv1.OperatorIDLabel + "=other"}})
	g.Expect(env.Client.Create(context.Background(), it)).To(Succeed())
	g.Eventually(integrationStatus(client.ObjectKeyFromObject(it)), timeout, poll).Should(And(
		HaveField("Phase", camelv1.IntegrationPhaseError),
		HaveField("Conditions", ContainElement(And(HaveField("Type", "Stalled"),
			HaveField("Message", ContainSubstring("prometheus.podMonitorLabels[0]")))))))
	g.Expect(apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKeyFromObject(it), podMonitor()))).To(BeTrue())
}
