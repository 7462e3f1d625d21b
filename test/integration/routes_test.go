package integration

import (
	"context"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/test/harness"
)

// TestTheComponentsAnIntegrationsRoutesUseAreInItsKit: the kit of an integration holds
// the components its flows and sources name, besides its spec.dependencies, and none
// that the runtime already carries.
func TestTheComponentsAnIntegrationsRoutesUseAreInItsKit(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	it := sourceIntegration(ns, "routes", "mvn:org.acme:lib:1.0")
	it.Spec.Flows = []camelv1.RawObject{harness.Raw(map[string]any{"from": map[string]any{
		"uri": "kafka:orders", "steps": []any{map[string]any{"to": "direct:next"}, map[string]any{"to": "log:info"}}}})}
	it.Spec.Sources = []camelv1.SourceSpec{{Name: "Next.java", Content: `from("direct:next").to("jms:queue:out");`}}
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())

	k := &camelv1.IntegrationKit{}
	g.Eventually(func() error {
		cur := &camelv1.Integration{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(it), cur); err != nil {
			return err
		}
		if cur.Status.IntegrationKit == nil {
			return errNoKitYet
		}
		return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cur.Status.IntegrationKit.Name}, k)
	}, timeout, poll).Should(Succeed())
	g.Expect(k.Spec.Dependencies).To(Equal([]string{"camel:direct", "camel:jms", "camel:kafka", "mvn:org.acme:lib:1.0"}))
}

var errNoKitYet = errors.New("the integration has no kit yet")
