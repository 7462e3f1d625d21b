package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/image/imagetest"
	"github.com/caravan-dev/caravan/test/harness"
)

const baseRepository = "caravan-e2e/base"

// TestAKitBuiltIntegrationMovesToTheNewOwnersKit: an integration built
// from a kit of kit-op-1, moved to kit-op-2, runs a kit of
// kit-op-2's: its pods roll to that kit's image, never with fewer ready
// pods than replicas, on the same Deployment.
func TestAKitBuiltIntegrationMovesToTheNewOwnersKit(t *testing.T) {
	g := NewWithT(t)
	ns1, ns2, apps := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	reg := imagetest.StartRegistry(t)
	imagetest.PushBase(t, reg, baseRepository)
	op1 := env.InstallOperator(t, "kit-op-1", ns1, harness.OperatorOptions{})
	op2 := env.InstallOperator(t, "kit-op-2", ns2, harness.OperatorOptions{})
	waitReady(t, op1, op2)
	registry := camelv1.RegistrySpec{Address: reg.Address, Insecure: true}
	env.UsePlatformRegistry(t, ns1, "kit-op-1", registry, baseRepository+":latest")
	env.UsePlatformRegistry(t, ns2, "kit-op-2", registry, baseRepository+":latest")

	it := newIntegration(apps, "built", "kit-op-1", 2)
	delete(it.Spec.Traits, "container")
	it.Spec.Dependencies = []string{"camel:timer", "camel:log"}
	create(t, it)
	key := client.ObjectKeyFromObject(it)
	waitRunningUnder(t, key, "kit-op-1")
	before, err := getDeployment(key)
	g.Expect(err).NotTo(HaveOccurred())
	firstKit := kitOf(t, key, "kit-op-1")
	g.Expect(before.Spec.Template.Spec.Containers[0].Image).To(Equal(firstKit.Status.Image))

	t.Log("moved to kit-op-2, it runs kit-op-2's kit, rolled without losing a ready pod")
	pods := watchReadyPods(apps, "built")
	g.Eventually(pods.Samples, timeout, poll).Should(BeNumerically(">=", 3))
	reassign(t, it, "kit-op-2")
	waitRunningUnder(t, key, "kit-op-2")
	minReady, _, seen := pods.Stop()
	g.Expect(minReady).To(BeNumerically(">=", 2), "ready pods fell below the replicas during the move")
	g.Expect(seen).To(BeNumerically(">", 2), "the pods did not roll to the new kit")
	after, err := getDeployment(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after.UID).To(Equal(before.UID), "the Deployment was recreated")
	secondKit := kitOf(t, key, "kit-op-2")
	g.Expect(secondKit.Name).NotTo(Equal(firstKit.Name))
	g.Expect(after.Spec.Template.Spec.Containers[0].Image).To(Equal(secondKit.Status.Image))
	g.Expect(secondKit.Status.Image).NotTo(Equal(firstKit.Status.Image))
}

// kitOf returns the kit the integration's status names, once it is
// Ready and assigned to operatorID.
func kitOf(t *testing.T, key client.ObjectKey, operatorID string) *camelv1.IntegrationKit {
	t.Helper()
	return waitKit(t, key, timeout, func(k *camelv1.IntegrationKit) error {
		if k.Annotations[camelv1.OperatorIDAnnotation] != operatorID || k.Status.Phase != camelv1.IntegrationKitPhaseReady {
			return errorf("kit %s: operator %q, phase %q", k.Name, k.Annotations[camelv1.OperatorIDAnnotation], k.Status.Phase)
		}
		return nil
	})
}

// waitKit returns the kit the integration's status names, once check
// passes on it, within wait.
func waitKit(t *testing.T, key client.ObjectKey, wait time.Duration, check func(*camelv1.IntegrationKit) error) *camelv1.IntegrationKit {
	t.Helper()
	k := &camelv1.IntegrationKit{}
	NewWithT(t).Eventually(func() error {
		it, err := getIntegration(key)
		if err != nil {
			return err
		}
		ref := it.Status.IntegrationKit
		if ref == nil {
			return errorf("integration %s names no kit", key)
		}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, k); err != nil {
			return err
		}
		return check(k)
	}, wait, poll).Should(Succeed())
	return k
}
