package tenancy

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	installpkg "github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/render"
	"github.com/caravan-dev/caravan/internal/scheme"
	"github.com/caravan-dev/caravan/test/harness"
)

// serviceAccountClient authenticates as the ServiceAccount ns/name with a
// token the API server issues for it, as the operator's pod does.
func serviceAccountClient(t *testing.T, ns, name string) client.Client {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token for %s/%s: %v", ns, name, err)
	}
	cfg := rest.AnonymousClientConfig(env.Config)
	cfg.BearerToken = tr.Status.Token
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// attack is one write or read that operator A's identity tries and the
// API server must refuse: want is a part of the refusal's message, or
// else is another when two policies refuse it (the API server answers
// with the first it evaluates, in no fixed order).
type attack struct {
	what string
	try  func(ctx context.Context, c client.Client) error
	want string
	or   string
	// takeover: the write relabels a child of another operator's
	// integration, keeping its owner references. The confinement policy
	// admits it (the takeover of a child after a move, which it cannot
	// tell from this without reading the integration), and the child's
	// owner must take it back.
	takeover client.Object
}

func mergePatch(c client.Client, obj client.Object, patch string, opts ...client.PatchOption) error {
	return c.Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte(patch)), opts...)
}

func statusPatch(c client.Client, obj client.Object, patch string) error {
	return c.Status().Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte(patch)))
}

func labelledConfigMap(ns, name, id string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if id != "" {
		cm.Labels = map[string]string{camelv1.OperatorIDLabel: id}
	}
	return cm
}

// TestAnOperatorsIdentityIsConfinedToItsShare acts as operator conf-a's
// ServiceAccount, with a token, and tries to change what is not its own:
// operator conf-b's Integration, Deployment and ConfigMap in a namespace
// both serve (with every verb), objects in a namespace conf-a does not
// serve, objects no operator owns, Secrets it has no use for. The API
// server refuses every try, by RBAC or by the confinement policy, with a
// message; but one: a relabel of conf-b's child that keeps its owner
// references is the takeover of a child after a move, which admission
// cannot tell apart without reading the integration, and conf-b takes
// the child back. conf-a's writes to its own share still go through.
func TestAnOperatorsIdentityIsConfinedToItsShare(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ensureDefault(t)
	opsA, opsB, shared, onlyA, onlyB := env.Namespace(t), env.Namespace(t), env.Namespace(t), env.Namespace(t), env.Namespace(t)
	install(t, opsA, "conf-a", "--watch-namespaces", onlyA+","+shared)
	install(t, opsB, "conf-b", "--watch-namespaces", onlyB+","+shared)

	theirs := harness.NewIntegration(shared, "theirs", "conf-b", 1)
	far := harness.NewIntegration(onlyB, "far", "conf-b", 1)
	for _, it := range []*camelv1.Integration{theirs, far} {
		g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	}
	for _, it := range []*camelv1.Integration{theirs, far} {
		g.Eventually(func() error { return env.RunningUnder(client.ObjectKeyFromObject(it), "conf-b") }, timeout, poll).Should(Succeed())
	}
	users := labelledConfigMap(onlyA, "users-own", "")
	g.Expect(env.Client.Create(ctx, users)).To(Succeed())
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: onlyA, Name: "credentials"}, StringData: map[string]string{"k": "v"}}
	g.Expect(env.Client.Create(ctx, secret)).To(Succeed())

	a := serviceAccountClient(t, opsA, "conf-a-operator")
	deployment := func(it *camelv1.Integration) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: it.Namespace, Name: it.Name}}
	}
	t.Log("the policy is in effect for conf-a's identity")
	g.Eventually(func() error {
		err := a.Create(ctx, labelledConfigMap(shared, "probe", "conf-b"))
		if err == nil {
			_ = env.Client.Delete(ctx, labelledConfigMap(shared, "probe", ""))
			return fmt.Errorf("created")
		}
		return nil
	}, 30*time.Second, time.Second).Should(Succeed())

	attacks := []attack{
		{"change conf-b's Integration", func(ctx context.Context, c client.Client) error {
			return mergePatch(c, theirs.DeepCopy(), `{"spec":{"replicas":5}}`)
		}, "may change Integration theirs only while it is labelled camel.apache.org/operator.id=conf-a, and it is labelled conf-b", "", nil},
		{"assign conf-b's Integration to conf-a", func(ctx context.Context, c client.Client) error {
			return annotate(c, theirs.DeepCopy(), "conf-a")
		}, "it is labelled conf-b (the change labels it conf-a)", relabelledOrNot("it is labelled conf-b"), nil},
		{"write conf-b's Integration status", func(ctx context.Context, c client.Client) error {
			return statusPatch(c, theirs.DeepCopy(), `{"status":{"phase":"Error"}}`)
		}, "may change Integration theirs only while", "only the default operator, camel-k, may change the status of Integration theirs", nil},
		{"mark conf-b's Integration as an orphan (a status change that keeps its phase and owner), which only the default operator may", func(ctx context.Context, c client.Client) error {
			return statusPatch(c, theirs.DeepCopy(), `{"status":{"conditions":[{"type":"OperatorAvailable","status":"False","reason":"HeartbeatStale","message":"planted","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)
		}, "only the default operator, camel-k, may change the status of Integration theirs while it is labelled for another operator", "", nil},
		{"delete conf-b's Integration", func(ctx context.Context, c client.Client) error {
			return c.Delete(ctx, theirs.DeepCopy())
		}, `cannot delete resource "integrations"`, "", nil},
		{"create an Integration for conf-b", func(ctx context.Context, c client.Client) error {
			return c.Create(ctx, harness.NewIntegration(shared, "for-b", "conf-b", 1))
		}, "needs the verb use on integrationoperators/conf-b", "may create Integration only labelled camel.apache.org/operator.id=conf-a, and for-b is ", nil},
		{"scale conf-b's Deployment", func(ctx context.Context, c client.Client) error {
			return mergePatch(c, deployment(theirs), `{"spec":{"replicas":3}}`)
		}, "may change Deployment theirs only while it is labelled camel.apache.org/operator.id=conf-a, and it is labelled conf-b", "", nil},
		{"take conf-b's Deployment away from its Integration", func(ctx context.Context, c client.Client) error {
			return mergePatch(c, deployment(theirs), `{"metadata":{"ownerReferences":null,"labels":{"camel.apache.org/operator.id":"conf-a"}}}`)
		}, "(the change labels it conf-a)", "", nil},
		{"delete conf-b's Deployment", func(ctx context.Context, c client.Client) error {
			return c.Delete(ctx, deployment(theirs))
		}, "may delete Deployment theirs only while it is labelled camel.apache.org/operator.id=conf-a, and it is labelled conf-b", "", nil},
		{"create a ConfigMap labelled for conf-b", func(ctx context.Context, c client.Client) error {
			return c.Create(ctx, labelledConfigMap(shared, "for-b", "conf-b"))
		}, "may create ConfigMap only labelled camel.apache.org/operator.id=conf-a, and for-b is labelled conf-b", "", nil},
		{"create an unlabelled Service", func(ctx context.Context, c client.Client) error {
			return c.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: onlyA, Name: "unlabelled"},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}})
		}, "and unlabelled is not labelled", "", nil},
		{"label a user's ConfigMap as its own", func(ctx context.Context, c client.Client) error {
			return mergePatch(c, users.DeepCopy(), `{"metadata":{"labels":{"camel.apache.org/operator.id":"conf-a"}}}`)
		}, "may change ConfigMap users-own only while it is labelled camel.apache.org/operator.id=conf-a, and it is not labelled", "", nil},
		{"delete a user's ConfigMap", func(ctx context.Context, c client.Client) error {
			return c.Delete(ctx, users.DeepCopy())
		}, "may delete ConfigMap users-own only while it is labelled camel.apache.org/operator.id=conf-a, and it is not labelled", "", nil},
		{"change a Deployment in a namespace conf-a does not serve", func(ctx context.Context, c client.Client) error {
			return mergePatch(c, deployment(far), `{"spec":{"replicas":3}}`)
		}, `cannot patch resource "deployments" in API group "apps" in the namespace "` + onlyB + `"`, "", nil},
		{"create a Deployment in a namespace conf-a does not serve", func(ctx context.Context, c client.Client) error {
			d := deployment(far)
			d.Name, d.Labels = "mine-there", map[string]string{camelv1.OperatorIDLabel: "conf-a"}
			return c.Create(ctx, d)
		}, `cannot create resource "deployments" in API group "apps" in the namespace "` + onlyB + `"`, "", nil},
		{"read a Secret of a namespace it serves", func(ctx context.Context, c client.Client) error {
			return c.Get(ctx, client.ObjectKeyFromObject(secret), &corev1.Secret{})
		}, `cannot get resource "secrets" in API group "" in the namespace "` + onlyA + `"`, "", nil},
		{"read a Secret of another namespace", func(ctx context.Context, c client.Client) error {
			return c.Get(ctx, client.ObjectKey{Namespace: "caravan-system", Name: "anything"}, &corev1.Secret{})
		}, `cannot get resource "secrets" in API group "" in the namespace "caravan-system"`, "", nil},
		{"create a Secret", func(ctx context.Context, c client.Client) error {
			return c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: opsA, Name: "planted"}})
		}, `cannot create resource "secrets"`, "", nil},
	}
	attacks = append(attacks, everyVerbOn(theirs, deployment(theirs), configMapOf(theirs))...)
	refusedBy := map[string]int{}
	var slowestTakeBack time.Duration
	for _, at := range attacks {
		tried := time.Now()
		err := at.try(ctx, a)
		if at.takeover != nil {
			g.Expect(err).NotTo(HaveOccurred(), "%s: the takeover of a child is admitted", at.what)
			g.Eventually(func() map[string]string {
				cur := at.takeover.DeepCopyObject().(client.Object)
				_ = env.Client.Get(ctx, client.ObjectKeyFromObject(cur), cur)
				return map[string]string{"label": cur.GetLabels()[camelv1.OperatorIDLabel], "planted": cur.GetAnnotations()["planted"]}
			}, timeout, poll).Should(Equal(map[string]string{"label": "conf-b", "planted": ""}),
				"%s: conf-b takes its child back, without what conf-a wrote", at.what)
			refusedBy["admitted, and taken back by its owner"]++
			slowestTakeBack = max(slowestTakeBack, time.Since(tried))
			t.Logf("taken back by conf-b: %s", at.what)
			continue
		}
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s: want Forbidden, got %v", at.what, err)
		want := ContainSubstring(at.want)
		if at.or != "" {
			want = Or(want, ContainSubstring(at.or))
		}
		if withoutMutatingPolicies {
			// There the label guard may refuse a relabelling first.
			want = Or(want, ContainSubstring(installpkg.LabelGuardPolicy))
		}
		g.Expect(err.Error()).To(want, at.what)
		layer := "the confinement policy"
		switch {
		case strings.Contains(err.Error(), installpkg.LabelGuardPolicy):
			layer = "the label guard"
		case strings.Contains(err.Error(), "cannot "):
			layer = "RBAC"
		case strings.Contains(err.Error(), "needs the verb use"):
			layer = "the assignment policy"
		case strings.Contains(err.Error(), "only the default operator"):
			layer = "the orphan-mark policy"
		}
		refusedBy[layer]++
		t.Logf("refused (%s): %s: %v", layer, at.what, err)
	}

	t.Log("conf-b said so in a Warning Event on its integration")
	g.Eventually(func() []string {
		events := &eventsv1.EventList{}
		_ = env.Client.List(ctx, events, client.InNamespace(shared))
		var notes []string
		for _, e := range events.Items {
			if e.Regarding.Name == theirs.Name && e.Reason == "ChildTakenBack" && e.Type == corev1.EventTypeWarning {
				notes = append(notes, e.Note)
			}
		}
		return notes
	}, timeout, poll).Should(ContainElement(And(ContainSubstring("Deployment theirs was labelled for operator conf-a"),
		ContainSubstring("restored as operator conf-b renders it"))))

	t.Log("nothing changed: conf-b's objects are as they were, the user's ConfigMap is unlabelled")
	cur := &camelv1.Integration{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(theirs), cur)).To(Succeed())
	g.Expect(cur.Annotations).To(And(HaveKeyWithValue(camelv1.OperatorIDAnnotation, "conf-b"), Not(HaveKey("planted"))))
	g.Expect(cur.Spec.Replicas).To(Equal(ptr.To[int32](1)))
	d := deployment(theirs)
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
	g.Expect(d.Labels).To(HaveKeyWithValue(camelv1.OperatorIDLabel, "conf-b"))
	g.Expect(metav1.GetControllerOf(d)).NotTo(BeNil())
	cm := configMapOf(theirs)
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
	g.Expect(cm.Labels).To(HaveKeyWithValue(camelv1.OperatorIDLabel, "conf-b"))
	g.Expect(cm.Annotations).NotTo(HaveKey("planted"))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(users), users)).To(Succeed())
	g.Expect(users.Labels).NotTo(HaveKey(camelv1.OperatorIDLabel))

	t.Log("conf-a's identity still writes its own share")
	own := labelledConfigMap(shared, "own", "conf-a")
	g.Expect(a.Create(ctx, own)).To(Succeed())
	g.Expect(mergePatch(a, own, `{"data":{"k":"v"}}`)).To(Succeed())
	g.Expect(a.Delete(ctx, own)).To(Succeed())

	t.Log("RBAC confines it to the namespaces it serves: once a re-install narrows them to " + onlyA +
		", a write in " + shared + " is refused")
	install(t, opsA, "conf-a", "--force", "--watch-namespaces", onlyA)
	err := a.Create(ctx, labelledConfigMap(shared, "late", "conf-a"))
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring(`cannot create resource "configmaps" in API group "" in the namespace "` + shared + `"`))
	refusedBy["RBAC"]++
	tries := len(attacks) + 1
	t.Logf("%d tries: %v; each child taken over was taken back within %s", tries, refusedBy, slowestTakeBack.Round(100*time.Millisecond))
}

// configMapOf is the ConfigMap of the integration's sources.
func configMapOf(it *camelv1.Integration) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: it.Namespace, Name: render.ConfigMapName(it.Name)}}
}

// labelsWith is m (labels or annotations) with key set to value.
func labelsWith(m map[string]string, key, value string) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	out[key] = value
	return out
}

// everyVerbOn are the writes an operator's identity tries on objects of
// another operator's share, with each verb: an update (PUT) that takes
// the object over, a merge patch of its content, a JSON patch and a
// server-side apply of the operator-id label, and a delete. Each is
// refused by RBAC or by the confinement policy.
func everyVerbOn(objs ...client.Object) []attack {
	const want, or = "it is labelled conf-b", "cannot "
	label := "/metadata/labels/" + jsonPointer(camelv1.OperatorIDLabel)
	var out []attack
	for _, obj := range objs {
		kind := reflect.TypeOf(obj).Elem().Name()
		var child client.Object
		if _, ok := obj.(*camelv1.Integration); !ok {
			child = obj
		}
		fresh := func(ctx context.Context) (client.Object, error) {
			cur := obj.DeepCopyObject().(client.Object)
			return cur, env.Client.Get(ctx, client.ObjectKeyFromObject(obj), cur)
		}
		out = append(out,
			attack{"update (PUT) conf-b's " + kind + " to take it over", func(ctx context.Context, c client.Client) error {
				cur, err := fresh(ctx)
				if err != nil {
					return err
				}
				cur.SetLabels(labelsWith(cur.GetLabels(), camelv1.OperatorIDLabel, "conf-a"))
				cur.SetAnnotations(labelsWith(cur.GetAnnotations(), "planted", "yes"))
				return c.Update(ctx, cur)
			}, want, or, child},
			attack{"merge patch conf-b's " + kind, func(ctx context.Context, c client.Client) error {
				return mergePatch(c, obj.DeepCopyObject().(client.Object), `{"metadata":{"annotations":{"planted":"yes"}}}`)
			}, want, or, nil},
			attack{"JSON patch the label of conf-b's " + kind, func(ctx context.Context, c client.Client) error {
				patch := fmt.Sprintf(`[{"op":"replace","path":%q,"value":"conf-a"}]`, label)
				return c.Patch(ctx, obj.DeepCopyObject().(client.Object), client.RawPatch(types.JSONPatchType, []byte(patch)))
			}, want, or, child},
			attack{"server-side apply the label of conf-b's " + kind, func(ctx context.Context, c client.Client) error {
				return applyPatch(nil, map[string]string{camelv1.OperatorIDLabel: "conf-a"})(c, obj.DeepCopyObject().(client.Object))
			}, want, or, child},
			attack{"delete conf-b's " + kind, func(ctx context.Context, c client.Client) error {
				return c.Delete(ctx, obj.DeepCopyObject().(client.Object))
			}, "may delete", or, nil},
		)
	}
	return out
}

// TestAPipeMovesBetweenConfinedOperators: a Pipe moved from one operator
// to another that serves its namespace too runs under the new one, with
// the same Deployment: the confinement policy lets the new owner take the
// Pipe's Integration and its Deployment over, and the previous owner
// record its release.
func TestAPipeMovesBetweenConfinedOperators(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ensureDefault(t)
	opsA, opsB, shared := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	install(t, opsA, "pipe-a", "--watch-namespaces", shared)
	install(t, opsB, "pipe-b", "--watch-namespaces", shared)
	p := harness.NewPipe(shared, "ticker", "pipe-a")
	g.Expect(env.Client.Create(ctx, p)).To(Succeed())
	key := client.ObjectKeyFromObject(p)
	g.Eventually(func() error { return env.RunningUnder(key, "pipe-a") }, timeout, poll).Should(Succeed())
	d := &appsv1.Deployment{}
	g.Expect(env.Client.Get(ctx, key, d)).To(Succeed())
	uid := d.UID

	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"pipe-b"}}}`, camelv1.OperatorIDAnnotation)
	g.Expect(mergePatch(env.Client, p, patch)).To(Succeed())
	g.Eventually(func() error { return env.RunningUnder(key, "pipe-b") }, timeout, poll).Should(Succeed())
	g.Eventually(func() (map[string]string, error) {
		err := env.Client.Get(ctx, key, d)
		return d.Labels, err
	}, timeout, poll).Should(HaveKeyWithValue(camelv1.OperatorIDLabel, "pipe-b"))
	g.Expect(d.UID).To(Equal(uid), "the Deployment was replaced, not taken over")
	it := &camelv1.Integration{}
	g.Expect(env.Client.Get(ctx, key, it)).To(Succeed())
	g.Expect(it.Labels).To(HaveKeyWithValue(camelv1.OperatorIDLabel, "pipe-b"))
	g.Expect(it.Status.Ownership.Epoch).To(BeNumerically(">=", 2))
}

// relabelledOrNot is what the confinement policy says of an assignment that an operator's
// identity may not make, where no label policy relabels the object in the same request (an API
// server without MutatingAdmissionPolicy); "" where one does, and the message names the label.
func relabelledOrNot(message string) string {
	if withoutMutatingPolicies {
		return message
	}
	return ""
}
