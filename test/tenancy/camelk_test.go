package tenancy

import (
	"context"
	"fmt"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	patch := `{"spec":{"traits":{"environment":{"vars":["TZ=UTC"]},"container":{"port":8080}}}}`
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
	movesBackAfterItsReplacement(t, it, other, image, pods)
}

// movesBackAfterItsReplacement: an integration whose Deployment a Caravan operator replaced moves
// back to the operator that is not Caravan's. The Caravan operator lets go of what it made: its
// Deployment goes with its pods left running, its Service is handed to the other operator's id.
// That operator's Deployment, of the same selector, then adopts the pods' ReplicaSet.
func movesBackAfterItsReplacement(t *testing.T, it *camelv1.Integration, other, image string, pods func() ([]string, error)) {
	g := NewWithT(t)
	ctx := context.Background()
	key := client.ObjectKeyFromObject(it)
	g.Eventually(func() error { return env.Client.Get(ctx, key, &corev1.Service{}) }, timeout, poll).Should(Succeed())
	g.Eventually(pods, timeout, poll).Should(HaveLen(1))
	before, _ := pods()
	sets := &appsv1.ReplicaSetList{}
	g.Expect(env.Client.List(ctx, sets, client.InNamespace(it.Namespace), client.MatchingLabels{camelv1.IntegrationLabel: it.Name})).To(Succeed())

	t.Log("moved back to the other operator, the Caravan operator lets go of its Deployment, not of its pods")
	g.Expect(annotate(env.Client, it, other)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, key, &appsv1.Deployment{}))
	}, timeout, poll).Should(BeTrue(), "the Caravan operator kept its Deployment")
	g.Eventually(func() map[string]string { return read(t, key, &corev1.Service{}).Labels }, timeout, poll).
		Should(HaveKeyWithValue(camelv1.OperatorIDLabel, other))
	g.Expect(read(t, key, &corev1.Service{}).Annotations).To(HaveKeyWithValue(camelv1.OperatorIDAnnotation, other))
	g.Consistently(pods, "3s", poll).Should(Equal(before), "the pods stopped with the Deployment")

	t.Log("the other operator's Deployment adopts the ReplicaSet of the running pods")
	made := camelKDeployment(read(t, key, &camelv1.Integration{}), other, image)
	g.Expect(env.Client.Create(ctx, made, client.FieldOwner("camel-k-operator"))).To(Succeed())
	g.Eventually(func() error {
		for _, rs := range sets.Items {
			cur := read(t, client.ObjectKeyFromObject(&rs), &appsv1.ReplicaSet{})
			if !metav1.IsControlledBy(cur, made) {
				return fmt.Errorf("ReplicaSet %s is not adopted: %v", cur.Name, cur.OwnerReferences)
			}
		}
		return nil
	}, timeout, poll).Should(Succeed())
}

// camelKRules are the rights Camel K's operator holds on what it makes (a part of its ClusterRole).
var camelKRules = []rbacv1.PolicyRule{
	{APIGroups: []string{camelv1.GroupVersion.Group}, Resources: []string{"integrations", "integrations/status", "integrationkits", "builds"},
		Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "watch", "create", "patch", "delete"}},
	{APIGroups: []string{""}, Resources: []string{"configmaps", "services"}, Verbs: []string{"get", "list", "watch", "create", "patch", "delete"}},
}

// TestAnOperatorThatIsNotCaravansWritesOnlyWhatNoCaravanOperatorOwns: the identity of an operator
// that is not Caravan's, with Camel K's rights, declared by caravan grant --as-operator, makes what
// Camel K's operator makes under Caravan's admission policies: its Integration, assigned to itself,
// unlabelled children, their changes and its status. It may not change or delete what is labelled
// for a Caravan operator (a Deployment one took over, its integration once moved to one), nor label
// anything for one, nor assign work to one.
func TestAnOperatorThatIsNotCaravansWritesOnlyWhatNoCaravanOperatorOwns(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ensureDefault(t)
	ns := env.Namespace(t)
	id := "ck-" + ns[len(ns)-5:]
	const caravans = "caravan-owner"
	// Named as a Caravan operator's identity is, so that the confinement of Caravan's operators
	// would judge it, and refuse its unlabelled children, were it not declared.
	sa := id + "-operator"
	g.Expect(env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}})).To(Succeed())
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "tenancy-" + sa}, Rules: camelKRules}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}}}
	for _, obj := range []client.Object{role, binding} {
		g.Expect(env.Client.Create(ctx, obj)).To(Succeed())
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
	}
	admin := env.Kubeconfig(t, "admin", "system:masters")
	out, errOut, err := cli(t, admin, "grant", "-x", id, "--as-operator", "--to", "serviceaccount:"+ns+":"+sa)
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	t.Cleanup(func() {
		_, _, _ = cli(t, admin, "grant", "-x", id, "--as-operator", "--revoke", "--to", "serviceaccount:"+ns+":"+sa)
	})
	ck := serviceAccountClient(t, ns, sa)

	t.Log("it makes its integration and its unlabelled children, and changes them")
	it := harness.NewIntegration(ns, "its", id, 1)
	g.Eventually(func() error { return ck.Create(ctx, it.DeepCopy()) }, timeout, poll).Should(Succeed())
	it = read(t, client.ObjectKeyFromObject(it), &camelv1.Integration{})
	made := camelKDeployment(it, id, harness.TestImage)
	g.Expect(ck.Create(ctx, made)).To(Succeed())
	g.Expect(mergePatch(ck, made, `{"spec":{"replicas":2}}`)).To(Succeed())
	cm := labelledConfigMap(ns, "its-source-000", "")
	g.Expect(ck.Create(ctx, cm)).To(Succeed())
	g.Expect(mergePatch(ck, cm, `{"data":{"k":"v"}}`)).To(Succeed())
	g.Expect(statusPatch(ck, it, `{"status":{"phase":"Running"}}`)).To(Succeed())

	t.Log("it may not label anything for a Caravan operator, nor assign work to one")
	refusedSaying(t, ck, labelledConfigMap(ns, "theirs", caravans),
		"is declared an operator that is not Caravan's, and may not label ConfigMap theirs camel.apache.org/operator.id="+caravans)
	err = mergePatch(ck, cm, fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, camelv1.OperatorIDLabel, caravans))
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "relabelling its ConfigMap for a Caravan operator: %v", err)
	// Refused by the assignment policy or the foreign operator's confinement, whichever the API
	// server evaluates first.
	err = refused(t, ck, harness.NewIntegration(ns, "theirs", caravans, 1))
	g.Expect(err).To(MatchError(And(ContainSubstring("verb use on"), ContainSubstring(caravans))))

	t.Log("what a Caravan operator took over is out of its reach")
	g.Expect(mergePatch(env.Client, made, fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, camelv1.OperatorIDLabel, caravans))).To(Succeed())
	err = mergePatch(ck, made, `{"spec":{"replicas":1}}`)
	g.Expect(err).To(MatchError(ContainSubstring("may not change Deployment its: it is labelled camel.apache.org/operator.id=" + caravans)))
	err = ck.Delete(ctx, made)
	g.Expect(err).To(MatchError(ContainSubstring("may not delete Deployment its")))
	t.Log("but it may take over a child its integration controls, relabelling it to itself, as Caravan's operators may")
	child := labelledConfigMap(ns, "its-taken", caravans)
	child.OwnerReferences = made.OwnerReferences
	g.Expect(env.Client.Create(ctx, child)).To(Succeed())
	err = mergePatch(ck, child, `{"data":{"k":"v"}}`)
	g.Expect(err).To(MatchError(ContainSubstring("may not change ConfigMap its-taken")), "a change that keeps a Caravan operator's label")
	g.Expect(mergePatch(ck, child, fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, camelv1.OperatorIDLabel, id))).To(Succeed())
	moved := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q},"labels":{%q:%q}}}`,
		camelv1.OperatorIDAnnotation, caravans, camelv1.OperatorIDLabel, caravans)
	g.Expect(mergePatch(env.Client, it, moved)).To(Succeed())
	err = statusPatch(ck, it, `{"status":{"phase":"Error"}}`)
	g.Expect(err).To(MatchError(ContainSubstring("may not change Integration its")), "a status write once its integration moved")
	g.Expect(read(t, client.ObjectKeyFromObject(it), &camelv1.Integration{}).Status.Phase).To(Equal(camelv1.IntegrationPhaseRunning))
}
