package tenancy

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/test/harness"
)

// The outcomes of a request of the attack matrix.
const (
	// outcomeRefused: the API server answered Forbidden.
	outcomeRefused = "refused"
	// outcomeUnsupported: the API server refused the patch type (custom
	// resources take no strategic merge patch).
	outcomeUnsupported = "unsupported"
	// outcomeKept: the request was admitted and the object is still
	// assigned and labelled to the operator the user may use (the label
	// policy put the label back).
	outcomeKept = "kept"
	// outcomeBypass: the object ended up assigned or labelled to an
	// operator the user may not use there. Never expected.
	outcomeBypass = "bypass"
)

// matrixKind is one kind the matrix attacks: how to make a fresh,
// unassigned object of it.
type matrixKind struct {
	name  string
	fresh func(ns, name string) client.Object
}

var matrixKinds = []matrixKind{
	{"Integration", func(ns, name string) client.Object { return harness.NewIntegration(ns, name, "", 1) }},
	{"Pipe", func(ns, name string) client.Object {
		return &camelv1.Pipe{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: harness.PipeTimerToLog()}
	}},
	{"KameletBinding", func(ns, name string) client.Object {
		return &camelv1alpha1.KameletBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: harness.PipeTimerToLog()}
	}},
	{"IntegrationKit", func(ns, name string) client.Object {
		return &camelv1.IntegrationKit{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}},
	{"Build", func(ns, name string) client.Object {
		return &camelv1.Build{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}},
}

// matrixRequest is one write a tenant tries, and the outcome it must
// have.
type matrixRequest struct {
	what string
	want string
	// create makes the object to create, from a fresh one; nil for a
	// change of the tenant's own object.
	create func(obj client.Object)
	// change changes the tenant's own object (assigned to the operator
	// she may use).
	change func(c client.Client, own client.Object) error
}

func withMeta(annotations, labels map[string]string) func(client.Object) {
	return func(obj client.Object) {
		obj.SetAnnotations(annotations)
		obj.SetLabels(labels)
	}
}

func rawPatch(pt types.PatchType, body string) func(c client.Client, own client.Object) error {
	return func(c client.Client, own client.Object) error {
		return c.Patch(context.Background(), own, client.RawPatch(pt, []byte(body)))
	}
}

// applyPatch is a server-side apply of the tenant's own object with only
// the given metadata, forcing conflicts.
func applyPatch(annotations, labels map[string]string) func(c client.Client, own client.Object) error {
	return func(c client.Client, own client.Object) error {
		gvk, err := c.GroupVersionKindFor(own)
		if err != nil {
			return err
		}
		meta := map[string]any{"name": own.GetName(), "namespace": own.GetNamespace()}
		if annotations != nil {
			meta["annotations"] = annotations
		}
		if labels != nil {
			meta["labels"] = labels
		}
		body, err := json.Marshal(map[string]any{"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind, "metadata": meta})
		if err != nil {
			return err
		}
		return c.Patch(context.Background(), own, client.RawPatch(types.ApplyPatchType, body),
			client.FieldOwner("tenant"), client.ForceOwnership)
	}
}

// jsonPointer escapes a map key for a JSON patch path.
func jsonPointer(key string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

// matrixRequests are the writes a tenant who may use operator mine (and
// limited, which serves another namespace) tries against operator other,
// which she may not use.
// labelAttack is what a request that sets the label to another operator comes to: the label
// policy puts it back where the API server serves MutatingAdmissionPolicy, and the label guard
// refuses it where it does not.
func labelAttack() string {
	if withoutMutatingPolicies {
		return outcomeRefused
	}
	return outcomeKept
}

func matrixRequests(mine, limited, other string) []matrixRequest {
	id, label := camelv1.OperatorIDAnnotation, camelv1.OperatorIDLabel
	annotationPath := "/metadata/annotations/" + jsonPointer(id)
	labelPath := "/metadata/labels/" + jsonPointer(label)
	return []matrixRequest{
		{what: "create assigned to " + other, want: outcomeRefused,
			create: withMeta(map[string]string{id: other}, nil)},
		{what: "create labelled " + other + ", not assigned", want: outcomeRefused,
			create: withMeta(nil, map[string]string{label: other})},
		{what: "create with an empty assignment, labelled " + other, want: outcomeRefused,
			create: withMeta(map[string]string{id: ""}, map[string]string{label: other})},
		{what: "create assigned to " + other + " under another spelling (camel.apache.org/Operator.id)", want: outcomeRefused,
			create: withMeta(map[string]string{"camel.apache.org/Operator.id": other}, nil)},
		{what: "create assigned to " + other + " under another spelling (camel.apache.org/operator-id)", want: outcomeRefused,
			create: withMeta(map[string]string{"camel.apache.org/operator-id": other}, nil)},
		{what: "create assigned to " + mine + ", labelled " + other, want: labelAttack(),
			create: withMeta(map[string]string{id: mine}, map[string]string{label: other})},
		{what: "create assigned to " + limited + " outside its namespaces", want: outcomeRefused,
			create: withMeta(map[string]string{id: limited}, nil)},
		{what: "update (PUT) the assignment to " + other, want: outcomeRefused,
			change: func(c client.Client, own client.Object) error {
				own.SetAnnotations(map[string]string{id: other})
				return c.Update(context.Background(), own)
			}},
		{what: "merge patch the assignment to " + other, want: outcomeRefused,
			change: rawPatch(types.MergePatchType, fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, id, other))},
		{what: "JSON patch the assignment to " + other, want: outcomeRefused,
			change: rawPatch(types.JSONPatchType, fmt.Sprintf(`[{"op":"replace","path":%q,"value":%q}]`, annotationPath, other))},
		{what: "strategic merge patch the assignment to " + other, want: outcomeUnsupported,
			change: rawPatch(types.StrategicMergePatchType, fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, id, other))},
		{what: "server-side apply the assignment to " + other, want: outcomeRefused,
			change: applyPatch(map[string]string{id: other}, nil)},
		{what: "merge patch the label to " + other, want: labelAttack(),
			change: rawPatch(types.MergePatchType, fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, label, other))},
		{what: "JSON patch the label to " + other, want: labelAttack(),
			change: rawPatch(types.JSONPatchType, fmt.Sprintf(`[{"op":"replace","path":%q,"value":%q}]`, labelPath, other))},
		{what: "server-side apply the label to " + other, want: labelAttack(),
			change: applyPatch(nil, map[string]string{label: other})},
		{what: "merge patch the assignment to " + limited + " outside its namespaces", want: outcomeRefused,
			change: rawPatch(types.MergePatchType, fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, id, limited))},
	}
}

// assignmentRequests are the requests that do not depend on which
// operator the tenant may not use: removing the assignment, and writing
// it through the status subresource.
func assignmentRequests(other string) []matrixRequest {
	id := camelv1.OperatorIDAnnotation
	return []matrixRequest{
		{what: "merge patch the assignment away (the default operator's, which she may not use)", want: outcomeRefused,
			change: rawPatch(types.MergePatchType, fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, id))},
		{what: "JSON patch the assignment away", want: outcomeRefused,
			change: rawPatch(types.JSONPatchType, fmt.Sprintf(`[{"op":"remove","path":%q}]`, "/metadata/annotations/"+jsonPointer(id)))},
		{what: "merge patch the status subresource with the assignment to " + other, want: outcomeKept,
			change: func(c client.Client, own client.Object) error {
				patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, id, other)
				return c.Status().Patch(context.Background(), own, client.RawPatch(types.MergePatchType, []byte(patch)))
			}},
	}
}

// TestTheAttackMatrix: a tenant with every right on the five assignable
// kinds (and their status) in her namespace, who may use one operator
// there and one limited to another namespace, tries every way to assign
// work to an operator she may not use: each verb (create, update, merge,
// JSON and strategic merge patch, server-side apply, the status
// subresource), against an installed operator, the default one, and an id
// with no operator, and the ways around the policies (the label alone,
// an empty or differently spelt annotation, removing the annotation).
// Every request is refused, or admitted with the object still her
// operator's; the counts are logged for docs/reliability.md.
func TestTheAttackMatrix(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ensureDefault(t)
	ops, apps, served := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	install(t, ops, "mx-mine")
	install(t, ops, "mx-other")
	install(t, ops, "mx-limited", "--watch-namespaces", served)

	editor := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "matrix-editor"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{camelv1.GroupVersion.Group}, Verbs: []string{"*"},
			Resources: []string{"integrations", "integrations/status", "pipes", "pipes/status", "kameletbindings",
				"kameletbindings/status", "integrationkits", "integrationkits/status", "builds", "builds/status"}}},
	}
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, editor))).To(Succeed())
	for _, role := range []string{"matrix-editor", "mx-mine-operator-user", "mx-limited-operator-user"} {
		bind(t, apps, "mallory", role)
	}
	mallory := env.UserClient(t, "mallory", "tenants")
	// The limited operator's namespaces binding takes effect a moment
	// after the install: count nothing before it does.
	refused(t, env.Client, harness.NewIntegration(apps, "probe-limited", "mx-limited", 1))

	counts := map[string]map[string]int{} // kind → outcome → requests
	var failures []string
	for _, kind := range matrixKinds {
		counts[kind.name] = map[string]int{}
		own := kind.fresh(apps, "own-"+strings.ToLower(kind.name))
		own.SetAnnotations(map[string]string{camelv1.OperatorIDAnnotation: "mx-mine"})
		g.Eventually(func() error { return mallory.Create(ctx, own) }, 30*time.Second, poll).Should(Succeed(),
			"the tenant may create a %s for the operator she may use", kind.name)
		// Without MutatingAdmissionPolicy the operator mirrors the label a moment after the create:
		// a JSON patch that replaces the label needs it there.
		g.Eventually(func() (string, error) {
			stored := own.DeepCopyObject().(client.Object)
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(own), stored)
			return stored.GetLabels()[camelv1.OperatorIDLabel], err
		}, 30*time.Second, poll).Should(Equal("mx-mine"), "the %s was never labelled with its operator", kind.name)

		var requests []matrixRequest
		for _, other := range []string{"mx-other", "camel-k", "mx-none"} {
			requests = append(requests, matrixRequests("mx-mine", "mx-limited", other)...)
		}
		requests = append(requests, assignmentRequests("mx-other")...)
		for i, r := range requests {
			got, detail := tryRequest(t, mallory, kind, own, fmt.Sprintf("try-%s-%d", strings.ToLower(kind.name), i), r)
			counts[kind.name][got]++
			if got != r.want {
				failures = append(failures, fmt.Sprintf("%s: %s: want %s, got %s: %s", kind.name, r.what, r.want, got, detail))
			}
		}
	}
	logCounts(t, counts)
	g.Expect(failures).To(BeEmpty())
}

// tryRequest makes one request of the matrix and says what came of it,
// then puts the tenant's own object back as it was.
func tryRequest(t *testing.T, c client.Client, kind matrixKind, own client.Object, name string, r matrixRequest) (string, string) {
	t.Helper()
	ctx := context.Background()
	var obj client.Object
	var err error
	if r.create != nil {
		obj = kind.fresh(own.GetNamespace(), name)
		r.create(obj)
		err = c.Create(ctx, obj)
	} else {
		// The operator writes the object too: a change that lost to its
		// write is made again on what it wrote.
		for range 5 {
			obj = own.DeepCopyObject().(client.Object)
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(own), obj); err != nil {
				t.Fatal(err)
			}
			if err = r.change(c, obj); !apierrors.IsConflict(err) {
				break
			}
		}
	}
	switch {
	case apierrors.IsForbidden(err):
		return outcomeRefused, err.Error()
	case apierrors.IsUnsupportedMediaType(err):
		return outcomeUnsupported, err.Error()
	case err != nil:
		return "error", err.Error()
	}
	stored := obj.DeepCopyObject().(client.Object)
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), stored); err != nil {
		t.Fatal(err)
	}
	assigned, labelled := stored.GetAnnotations()[camelv1.OperatorIDAnnotation], stored.GetLabels()[camelv1.OperatorIDLabel]
	detail := fmt.Sprintf("stored assigned to %q, labelled %q", assigned, labelled)
	if r.create != nil {
		_ = env.Client.Delete(ctx, stored)
	} else {
		restore(t, stored)
	}
	// Without MutatingAdmissionPolicy, the operator mirrors the label a moment after a create.
	if assigned == "mx-mine" && (labelled == "mx-mine" || withoutMutatingPolicies && labelled == "") {
		return outcomeKept, detail
	}
	return outcomeBypass, detail
}

// restore assigns and labels the tenant's own object to mx-mine again, as
// an administrator, after a request that changed it.
func restore(t *testing.T, obj client.Object) {
	t.Helper()
	a, l := obj.GetAnnotations(), obj.GetLabels()
	if a[camelv1.OperatorIDAnnotation] == "mx-mine" && l[camelv1.OperatorIDLabel] == "mx-mine" {
		return
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"mx-mine"},"labels":{%q:"mx-mine"}}}`,
		camelv1.OperatorIDAnnotation, camelv1.OperatorIDLabel)
	if err := env.Client.Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("restoring %s: %v", obj.GetName(), err)
	}
}

// logCounts logs the requests by kind and outcome, and their total.
func logCounts(t *testing.T, counts map[string]map[string]int) {
	t.Helper()
	outcomes := []string{outcomeRefused, outcomeUnsupported, outcomeKept, outcomeBypass, "error"}
	var b strings.Builder
	fmt.Fprintf(&b, "%-16s %s TOTAL\n", "KIND", strings.Join(outcomes, " "))
	total := map[string]int{}
	for _, kind := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(&b, "%-16s", kind)
		sum := 0
		for _, o := range outcomes {
			fmt.Fprintf(&b, " %*d", len(o), counts[kind][o])
			total[o] += counts[kind][o]
			sum += counts[kind][o]
		}
		fmt.Fprintf(&b, " %5d\n", sum)
	}
	fmt.Fprintf(&b, "%-16s", "all")
	sum := 0
	for _, o := range outcomes {
		fmt.Fprintf(&b, " %*d", len(o), total[o])
		sum += total[o]
	}
	fmt.Fprintf(&b, " %5d\n", sum)
	t.Log("the attack matrix, requests by outcome:\n" + b.String())
}
