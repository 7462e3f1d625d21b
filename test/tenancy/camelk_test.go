package tenancy

import (
	"context"
	"fmt"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/render"
	"github.com/caravan-dev/caravan/test/harness"
)

// camelKDeployment is a Deployment as Camel K's operator (id) makes it for the integration it of
// an external image: controlled by it, annotated and not labelled with the operator's id, its pods
// told the operator's id.
func camelKDeployment(it *camelv1.Integration, id, image string) *appsv1.Deployment {
	selector := map[string]string{camelv1.IntegrationLabel: it.Name}
	annotations := map[string]string{camelv1.OperatorIDAnnotation: id, "kubectl.kubernetes.io/default-container": "integration"}
	return &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: it.Namespace, Name: it.Name, Annotations: annotations,
			Labels: map[string]string{camelv1.IntegrationLabel: it.Name, "camel.apache.org/generation": "1"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: camelv1.GroupVersion.String(), Kind: "Integration",
				Name: it.Name, UID: it.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: selector, Annotations: annotations},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "integration", Image: image,
					Env: []corev1.EnvVar{{Name: "CAMEL_K_OPERATOR_ID", Value: id}, {Name: "CAMEL_K_INTEGRATION", Value: it.Name},
						{Name: "CAMEL_K_CONF", Value: "/etc/camel/application.properties"}}}}},
			},
		},
	}
}

// read reads key into obj, failing the test when it cannot.
func read[T client.Object](t *testing.T, key client.ObjectKey, obj T) T {
	t.Helper()
	if err := env.Client.Get(context.Background(), key, obj); err != nil {
		t.Fatalf("reading %s: %v", key, err)
	}
	return obj
}

// TestAnIntegrationAnotherOperatorRanMovesToACaravanOperatorWithItsPods: an integration that an
// operator other than Caravan's ran (as Camel K's does: its Deployment unlabelled, its status
// without Caravan's ownership) is assigned to a Caravan operator. That operator, confined by the
// admission policies, takes the Deployment over as it is: the same pods run, the status the
// other operator wrote stays. Once the integration's spec changes, the operator replaces the
// Deployment with its own, and nothing of the other operator's stays in it.
func TestAnIntegrationAnotherOperatorRanMovesToACaravanOperatorWithItsPods(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ensureDefault(t)
	ops, ns := env.Namespace(t), env.Namespace(t)
	install(t, ops, "keeper", "--watch-namespaces", ns)
	const other = "not-caravans"

	it := harness.NewIntegration(ns, "legacy", other, 1)
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	const image = "registry.example/acme/legacy@sha256:1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809"
	made := camelKDeployment(it, other, image)
	g.Expect(env.Client.Create(ctx, made, client.FieldOwner("camel-k-operator"))).To(Succeed())
	key := client.ObjectKeyFromObject(it)
	// The default operator marks the integration as an orphan meanwhile: the write is retried.
	g.Eventually(func() error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(camelv1.GroupVersion.WithKind("Integration"))
		if err := env.Client.Get(ctx, key, u); err != nil {
			return err
		}
		u.Object["status"] = map[string]any{"phase": "Running", "digest": "its-digest", "image": image, "version": "2.10.1",
			"observedGeneration": u.GetGeneration(),
			"conditions": []any{map[string]any{"type": "DeploymentAvailable", "status": "True", "reason": "DeploymentAvailable",
				"lastUpdateTime": "2026-12-06T09:00:00Z"}}}
		return env.Client.Status().Update(ctx, u, client.FieldOwner("camel-k-operator"))
	}, timeout, poll).Should(Succeed())
	pods := func() ([]string, error) {
		list := &corev1.PodList{}
		err := env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{camelv1.IntegrationLabel: it.Name})
		var names []string
		for _, p := range list.Items {
			if p.DeletionTimestamp.IsZero() {
				names = append(names, p.Name)
			}
		}
		slices.Sort(names)
		return names, err
	}
	g.Eventually(pods, timeout, poll).Should(HaveLen(1))
	before, _ := pods()
	template := read(t, key, &appsv1.Deployment{}).Spec.Template

	t.Log("assigned to a Caravan operator, which keeps the Deployment and its pods")
	g.Expect(annotate(env.Client, it, "keeper")).To(Succeed())
	g.Eventually(func() error { return env.RunningUnder(key, "keeper") }, timeout, poll).Should(Succeed())
	moved := read(t, key, &camelv1.Integration{})
	g.Expect(moved.Status.Ownership).To(And(HaveField("Previous", other), HaveField("Kept.From", other),
		HaveField("Kept.Image", image), HaveField("Epoch", int64(1))))
	g.Expect(moved.Status.Digest).To(Equal("its-digest"), "the other operator's status is kept for its way back")
	g.Expect(moved.Status.CamelKIntegrationStatus.Version).To(Equal("2.10.1"))
	g.Expect(read(t, key, &appsv1.Deployment{}).Spec.Template).To(Equal(template))
	g.Consistently(pods, "3s", poll).Should(Equal(before), "the pods the other operator started were replaced")

	t.Log("assigned back to the operator that made the Deployment, which gets it back as it was")
	g.Expect(annotate(env.Client, it, other)).To(Succeed())
	g.Eventually(func() map[string]string { return read(t, key, &appsv1.Deployment{}).Labels }, timeout, poll).
		Should(HaveKeyWithValue(camelv1.OperatorIDLabel, other))
	back := read(t, key, &camelv1.Integration{})
	g.Expect(back.Status.Ownership.ReleasedAt).NotTo(BeNil())
	g.Expect(back.Status.Digest).To(Equal("its-digest"))
	g.Expect(read(t, key, &appsv1.Deployment{}).Spec.Template).To(Equal(template))

	t.Log("and to the Caravan operator again, which keeps it again")
	g.Expect(annotate(env.Client, it, "keeper")).To(Succeed())
	g.Eventually(func() (*camelv1.Integration, error) {
		cur := &camelv1.Integration{}
		return cur, env.Client.Get(ctx, key, cur)
	}, timeout, poll).Should(And(HaveField("Status.Ownership.Epoch", int64(2)), HaveField("Status.Ownership.ReleasedAt", BeNil()),
		HaveField("Status.Ownership.Kept.From", other)))
	g.Eventually(func() error { return env.RunningUnder(key, "keeper") }, timeout, poll).Should(Succeed())
	g.Expect(pods()).To(Equal(before), "the pods the other operator started were replaced")

	t.Log("its spec changes: the operator replaces the Deployment with its own, rolling")
	patch := `{"spec":{"traits":{"environment":{"vars":["TZ=UTC"]}}}}`
	g.Expect(env.Client.Patch(ctx, it, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
	g.Eventually(func() error {
		d := read(t, key, &appsv1.Deployment{})
		if d.Labels[render.AppliedHashLabel] == "" {
			return fmt.Errorf("not replaced yet")
		}
		for _, m := range d.ManagedFields {
			if m.Manager == "camel-k-operator" {
				return fmt.Errorf("fields of camel-k-operator stay: %s", m.FieldsV1)
			}
		}
		for _, e := range d.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "CAMEL_K_OPERATOR_ID" {
				return fmt.Errorf("the other operator's env stays")
			}
		}
		return env.RunningUnder(key, "keeper")
	}, timeout, poll).Should(Succeed())
	replaced := read(t, key, &camelv1.Integration{})
	g.Expect(replaced.Status.Ownership.Kept).To(BeNil())
	g.Expect(replaced.Status.Digest).NotTo(Equal("its-digest"))
	g.Expect(replaced.Status.CamelKIntegrationStatus.Version).To(BeEmpty())
}
