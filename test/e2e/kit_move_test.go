package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/image/imagetest"
	"github.com/caravan-dev/caravan/internal/kit"
	"github.com/caravan-dev/caravan/test/harness"
)

// Base images of the tests' platforms: two repositories, so two platforms can name different ones.
const (
	baseRepository      = "caravan-e2e/base"
	otherBaseRepository = "caravan-e2e/other-base"
)

// TestAKitBuiltIntegrationKeepsItsPodsOrRollsToTheNewOwnersKit: an integration
// built from a kit of kit-op-1, moved to kit-op-2, which would build the same
// jars on the same base image, keeps its pods: a kit of kit-op-2 wraps the image
// they run, for that integration alone; a new one of the same dependencies runs
// a kit kit-op-2 built. Moved on to kit-op-3, whose platform names another base image, it
// runs a kit kit-op-3 built: its pods roll to that kit's image, never with fewer
// ready pods than replicas, on the same Deployment.
func TestAKitBuiltIntegrationKeepsItsPodsOrRollsToTheNewOwnersKit(t *testing.T) {
	g := NewWithT(t)
	ns1, ns2, ns3, apps := env.Namespace(t), env.Namespace(t), env.Namespace(t), env.Namespace(t)
	reg := startRegistry(t)
	imagetest.PushBase(t, reg, baseRepository)
	imagetest.PushBase(t, reg, otherBaseRepository)
	op1 := env.InstallOperator(t, "kit-op-1", ns1, harness.OperatorOptions{})
	op2 := env.InstallOperator(t, "kit-op-2", ns2, harness.OperatorOptions{})
	op3 := env.InstallOperator(t, "kit-op-3", ns3, harness.OperatorOptions{})
	waitReady(t, op1, op2, op3)
	registry := camelv1.RegistrySpec{Address: reg.Address, Insecure: true}
	env.UsePlatformRegistry(t, ns1, "kit-op-1", registry, baseRepository+":latest")
	env.UsePlatformRegistry(t, ns2, "kit-op-2", registry, baseRepository+":latest")
	env.UsePlatformRegistry(t, ns3, "kit-op-3", registry, otherBaseRepository+":latest")

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
	podsBefore := integrationPods(t, apps, "built")
	g.Expect(podsBefore).To(HaveLen(2))

	t.Log("moved to kit-op-2, which would build the same jars on the same base image: its kit wraps the running image, and no pod is replaced")
	reassign(t, it, "kit-op-2")
	waitRunningUnder(t, key, "kit-op-2")
	adopted := kitOf(t, key, "kit-op-2")
	g.Expect(adopted.Name).NotTo(Equal(firstKit.Name), "two operators share a kit")
	g.Expect(adopted.Spec.Image).To(Equal(firstKit.Status.Image))
	g.Expect(adopted.Annotations).To(HaveKeyWithValue(kit.AdoptedFromAnnotation, firstKit.Name))
	g.Expect(adopted.Status.GetCondition(camelv1.ConditionReady).Message).To(ContainSubstring("of kit " + firstKit.Name))
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(adopted), &camelv1.Build{})).To(
		Satisfy(apierrors.IsNotFound), "kit-op-2 built a kit it wraps")
	g.Consistently(func() []string { return integrationPods(t, apps, "built") }, 3*time.Second, poll).Should(
		ConsistOf(podsBefore), "the move to an operator of the same kit replaced pods")
	mid, err := getDeployment(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(mid.Spec.Template).To(Equal(before.Spec.Template), "the move changed the pods' template")

	t.Log("a new integration of the same dependencies on kit-op-2 runs a kit kit-op-2 built, not the image it wraps")
	fresh := newIntegration(apps, "fresh", "kit-op-2", 1)
	delete(fresh.Spec.Traits, "container")
	fresh.Spec.Dependencies = it.Spec.Dependencies
	create(t, fresh)
	own := kitOf(t, client.ObjectKeyFromObject(fresh), "kit-op-2")
	g.Expect(adopted.Name).To(HavePrefix(own.Name+"-"), "the wrapping kit is not named after the set and the image")
	g.Expect(own.Spec.Image).To(BeEmpty())
	g.Expect(own.Status.Image).NotTo(Equal(firstKit.Status.Image))

	t.Log("moved to kit-op-3, whose platform names another base image: it runs kit-op-3's own kit, rolled without losing a ready pod")
	pods := watchReadyPods(apps, "built")
	g.Eventually(pods.Samples, timeout, poll).Should(BeNumerically(">=", 3))
	reassign(t, it, "kit-op-3")
	waitRunningUnder(t, key, "kit-op-3")
	minReady, _, seen := pods.Stop()
	g.Expect(minReady).To(BeNumerically(">=", 2), "ready pods fell below the replicas during the move")
	g.Expect(seen).To(BeNumerically(">", 2), "the pods did not roll to the new kit")
	after, err := getDeployment(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after.UID).To(Equal(before.UID), "the Deployment was recreated")
	built := kitOf(t, key, "kit-op-3")
	g.Expect(built.Spec.Image).To(BeEmpty(), "kit-op-3 wrapped an image of another base")
	g.Expect(after.Spec.Template.Spec.Containers[0].Image).To(Equal(built.Status.Image))
	g.Expect(built.Status.Image).NotTo(Equal(firstKit.Status.Image))
}

// TestAPinnedIntegrationKeepsItsPodsWhenMoved: two integrations pinned to one external kit of
// pin-op-1, as caravan promote pins its copies. One moves to pin-op-2, which runs a kit of its own
// that wraps the pinned kit's image: no pod is replaced. The other, still on pin-op-1, keeps
// running the pinned kit, which stays pin-op-1's.
func TestAPinnedIntegrationKeepsItsPodsWhenMoved(t *testing.T) {
	g := NewWithT(t)
	ns1, ns2, apps := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	op1 := env.InstallOperator(t, "pin-op-1", ns1, harness.OperatorOptions{})
	op2 := env.InstallOperator(t, "pin-op-2", ns2, harness.OperatorOptions{})
	waitReady(t, op1, op2)
	pinned := &camelv1.IntegrationKit{
		ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "promoted-kit",
			Annotations: map[string]string{camelv1.OperatorIDAnnotation: "pin-op-1"},
			Labels:      map[string]string{camelv1.IntegrationKitTypeLabel: camelv1.IntegrationKitTypeExternal}},
		Spec: camelv1.IntegrationKitSpec{Image: harness.TestImage, Dependencies: []string{"camel:timer", "camel:log"}},
	}
	create(t, pinned)
	keys := map[string]client.ObjectKey{}
	for _, name := range []string{"moved", "stays"} {
		it := newIntegration(apps, name, "pin-op-1", 1)
		delete(it.Spec.Traits, "container")
		it.Spec.IntegrationKit = &corev1.ObjectReference{Name: pinned.Name}
		create(t, it)
		keys[name] = client.ObjectKeyFromObject(it)
	}
	for _, key := range keys {
		waitRunningUnder(t, key, "pin-op-1")
	}
	before, err := getDeployment(keys["moved"])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(before.Spec.Template.Spec.Containers[0].Image).To(Equal(harness.TestImage))
	podsBefore := integrationPods(t, apps, "moved")
	g.Expect(podsBefore).To(HaveLen(1))

	t.Log("moved to pin-op-2: its own kit wraps the pinned kit's image, and no pod is replaced")
	moved, err := getIntegration(keys["moved"])
	g.Expect(err).NotTo(HaveOccurred())
	reassign(t, moved, "pin-op-2")
	waitRunningUnder(t, keys["moved"], "pin-op-2")
	wrapping := kitOf(t, keys["moved"], "pin-op-2")
	g.Expect(wrapping.Name).NotTo(Equal(pinned.Name), "two operators share a kit")
	g.Expect(wrapping.Spec.Image).To(Equal(harness.TestImage))
	g.Expect(wrapping.Annotations).To(HaveKeyWithValue(kit.AdoptedFromAnnotation, pinned.Name))
	g.Consistently(func() []string { return integrationPods(t, apps, "moved") }, 3*time.Second, poll).Should(
		ConsistOf(podsBefore), "the move of a pinned integration replaced pods")
	after, err := getDeployment(keys["moved"])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after.Spec.Template).To(Equal(before.Spec.Template), "the move changed the pods' template")

	t.Log("the integration left on pin-op-1 runs the pinned kit, still pin-op-1's")
	g.Expect(kitOf(t, keys["stays"], "pin-op-1").Name).To(Equal(pinned.Name))
	stays, err := getIntegration(keys["stays"])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(stays.Status.Phase).To(Equal(camelv1.IntegrationPhaseRunning))
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
