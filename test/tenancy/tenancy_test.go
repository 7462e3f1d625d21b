package tenancy

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	installpkg "github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/test/harness"
)

const (
	timeout = 2 * time.Minute
	poll    = 200 * time.Millisecond
)

var defaultOnce sync.Once

// ensureDefault installs camel-k, the default operator, once for the
// package: it adopts unassigned resources and marks orphans.
func ensureDefault(t *testing.T) {
	defaultOnce.Do(func() {
		admin := env.Kubeconfig(t, "admin", "system:masters")
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "caravan-system"}}
		_ = env.Client.Create(context.Background(), ns)
		if out, errOut, err := cli(t, admin, "install", "-n", "caravan-system", "--wait"); err != nil {
			t.Fatalf("installing camel-k: %v\n%s\n%s", err, out, errOut)
		}
	})
}

// tenant returns a client for a user onboarded as docs/install.md onboards a team: Kubernetes'
// edit role in ns, into which Caravan's caravan-edit role aggregates, and caravan grant of the
// given operators there, run as the administrator.
func tenant(t *testing.T, ns, user string, operators ...string) client.Client {
	t.Helper()
	NewWithT(t).Eventually(func() (bool, error) {
		edit := &rbacv1.ClusterRole{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Name: "edit"}, edit); err != nil {
			return false, err
		}
		for _, r := range edit.Rules {
			if slices.Contains(r.APIGroups, "camel.apache.org") && slices.Contains(r.Resources, "integrations") && slices.Contains(r.Verbs, "create") {
				return true, nil
			}
		}
		return false, nil
	}, timeout, poll).Should(BeTrue(), "caravan-edit never aggregated into edit")
	bind(t, ns, user, "edit")
	admin := env.Kubeconfig(t, "admin", "system:masters")
	for _, id := range operators {
		out, errOut, err := cli(t, admin, "grant", "-x", id, "--to", "user:"+user, "-n", ns)
		if err != nil || !strings.Contains(out, "created: user "+user+" may run work on operator "+id+" in namespace "+ns) {
			t.Fatalf("caravan grant -x %s --to user:%s -n %s: %v\n%s%s", id, user, ns, err, out, errOut)
		}
	}
	return env.UserClient(t, user, "tenants")
}

func bind(t *testing.T, ns, user, role string) {
	t.Helper()
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user + "-" + role},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if err := env.Client.Create(context.Background(), rb); err != nil {
		t.Fatal(err)
	}
}

func annotate(c client.Client, it *camelv1.Integration, id string) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, camelv1.OperatorIDAnnotation, id)
	return c.Patch(context.Background(), it, client.RawPatch(types.MergePatchType, []byte(patch)))
}

// refused creates obj until the API server refuses it as Forbidden, and
// returns that error. An admission policy binding (and its parameter)
// takes effect a moment after it is created: a create that got through
// before is deleted and tried again.
func refused(t *testing.T, c client.Client, obj client.Object) error {
	t.Helper()
	ctx := context.Background()
	var err error
	NewWithT(t).Eventually(func() bool {
		try := obj.DeepCopyObject().(client.Object)
		err = c.Create(ctx, try)
		if err == nil {
			_ = env.Client.Delete(ctx, try)
			return false
		}
		return apierrors.IsForbidden(err)
	}, 30*time.Second, time.Second).Should(BeTrue(), "never refused: %v", err)
	return err
}

// refusedSaying is refused until the refusal says want: a refusal by RBAC, whose authorizer has
// not seen a RoleBinding just made, is tried again.
func refusedSaying(t *testing.T, c client.Client, obj client.Object, want string) error {
	t.Helper()
	var err error
	NewWithT(t).Eventually(func() string {
		err = refused(t, c, obj)
		return err.Error()
	}, 30*time.Second, time.Second).Should(ContainSubstring(want))
	return err
}

// TestAssigningWorkToAnOperatorNeedsTheUseVerb: a tenant may assign to
// the operator she may use, is refused any other with a message naming
// the operator and the permission, and a refused change leaves the object
// as it was.
func TestAssigningWorkToAnOperatorNeedsTheUseVerb(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ensureDefault(t)
	ops, apps := env.Namespace(t), env.Namespace(t)
	install(t, ops, "tenant-a")
	install(t, ops, "tenant-b")
	alice := tenant(t, apps, "alice", "tenant-a")

	mine := harness.NewIntegration(apps, "mine", "tenant-a", 1)
	g.Expect(alice.Create(ctx, mine)).To(Succeed())
	if !withoutMutatingPolicies {
		g.Expect(mine.Labels).To(HaveKeyWithValue(camelv1.OperatorIDLabel, "tenant-a"), "the label is mirrored at admission")
	}
	g.Eventually(func() error { return env.RunningUnder(client.ObjectKeyFromObject(mine), "tenant-a") }, timeout, poll).Should(Succeed())

	theirs := harness.NewIntegration(apps, "theirs", "tenant-b", 1)
	err := refused(t, alice, theirs)
	g.Expect(err.Error()).To(ContainSubstring("to operator tenant-b needs the verb use on integrationoperators/tenant-b"))
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(theirs), &camelv1.Integration{}))).To(BeTrue())

	before := &camelv1.Integration{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mine), before)).To(Succeed())
	err = annotate(alice, mine.DeepCopy(), "tenant-b")
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)
	after := &camelv1.Integration{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mine), after)).To(Succeed())
	g.Expect(after.Annotations[camelv1.OperatorIDAnnotation]).To(Equal("tenant-a"))
	g.Expect(after.ResourceVersion).To(Equal(before.ResourceVersion), "a refused change changed the object")

	t.Log("caravan run --dry-run=server shows the refusal before anything is applied, and stores nothing")
	aliceKubeconfig := env.Kubeconfig(t, "alice")
	route := filepath.Join(t.TempDir(), "dry.yaml")
	g.Expect(os.WriteFile(route, []byte("- from:\n    uri: timer:dry\n    steps:\n    - log: dry\n"), 0o644)).To(Succeed())
	out, errOut, err := cli(t, aliceKubeconfig, "run", route, "-n", apps, "-x", "tenant-b", "--dry-run=server")
	g.Expect(err).To(HaveOccurred(), out)
	g.Expect(errOut).To(ContainSubstring("to operator tenant-b needs the verb use on integrationoperators/tenant-b"))
	out, errOut, err = cli(t, aliceKubeconfig, "run", route, "-n", apps, "-x", "tenant-a", "--dry-run=server")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	g.Expect(out).To(Equal("integration \"dry\" created (server dry run)\n"))
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: apps, Name: "dry"}, &camelv1.Integration{}))).To(BeTrue(),
		"a server dry run stored the integration")

	t.Log("the grant holds in its namespace only: in another one where alice may edit, tenant-a is refused her")
	elsewhere := env.Namespace(t)
	bind(t, elsewhere, "alice", "edit")
	refusedSaying(t, alice, harness.NewIntegration(elsewhere, "elsewhere", "tenant-a", 1), "to operator tenant-a needs the verb use")

	t.Log("caravan grant --revoke takes the use back")
	admin := env.Kubeconfig(t, "admin", "system:masters")
	out, errOut, err = cli(t, admin, "grant", "-x", "tenant-a", "--to", "user:alice", "-n", apps, "--revoke")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	g.Expect(out).To(ContainSubstring("deleted: user alice may no longer run work on operator tenant-a in namespace " + apps))
	err = refused(t, alice, harness.NewIntegration(apps, "revoked", "tenant-a", 1))
	g.Expect(err.Error()).To(ContainSubstring("to operator tenant-a needs the verb use"))

	t.Log("an unassigned create is judged against the default operator, camel-k")
	err = alice.Create(ctx, harness.NewIntegration(apps, "unassigned", "", 1))
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("to operator camel-k"))
	bind(t, apps, "alice", "camel-k-operator-user")
	unassigned := harness.NewIntegration(apps, "unassigned", "", 1)
	g.Eventually(func() error { return alice.Create(ctx, unassigned) }, 10*time.Second, poll).Should(Succeed())
	if withoutMutatingPolicies {
		t.Log("without MutatingAdmissionPolicy, the default operator takes it, and assigns it to itself")
		g.Eventually(func() (map[string]string, error) {
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(unassigned), unassigned)
			return unassigned.Annotations, err
		}, timeout, poll).Should(HaveKeyWithValue(camelv1.OperatorIDAnnotation, "camel-k"))
		return
	}
	g.Expect(unassigned.Annotations).To(HaveKeyWithValue(camelv1.OperatorIDAnnotation, "camel-k"))
}

// TestOrphansAreMarkedAndRecover: uninstalling an operator turns its
// integrations into orphans that say so and are listed as such; once it
// is back, the mark goes and nothing is redeployed.
func TestOrphansAreMarkedAndRecover(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ensureDefault(t)
	ops, apps := env.Namespace(t), env.Namespace(t)
	admin := env.Kubeconfig(t, "admin", "system:masters")
	install(t, ops, "leaving")
	it := harness.NewIntegration(apps, "left-behind", "leaving", 1)
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	key := client.ObjectKeyFromObject(it)
	g.Eventually(func() error { return env.RunningUnder(key, "leaving") }, timeout, poll).Should(Succeed())
	d := &appsv1.Deployment{}
	g.Expect(env.Client.Get(ctx, key, d)).To(Succeed())
	generation := d.Generation

	_, errOut, err := cli(t, admin, "uninstall", "-n", ops, "-x", "leaving")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	g.Expect(errOut).To(ContainSubstring("operator leaving leaves 1 integration(s) behind"))
	g.Expect(errOut).To(ContainSubstring("caravan reassign --from leaving --to ID -A"))
	g.Eventually(func() string {
		cur := &camelv1.Integration{}
		_ = env.Client.Get(ctx, key, cur)
		if c := cur.Status.GetCondition(camelv1.ConditionOperatorAvailable); c != nil && c.Status == metav1.ConditionFalse {
			return c.Reason
		}
		return ""
	}, timeout, poll).Should(Equal("NotRegistered"))
	out, _, err := cli(t, admin, "get", "--orphaned", "-n", apps)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainSubstring("left-behind"))

	install(t, ops, "leaving")
	g.Eventually(func() bool {
		cur := &camelv1.Integration{}
		_ = env.Client.Get(ctx, key, cur)
		return cur.Status.GetCondition(camelv1.ConditionOperatorAvailable) == nil && cur.Status.Phase == camelv1.IntegrationPhaseRunning
	}, timeout, poll).Should(BeTrue(), "the orphan mark stays after the operator came back")
	g.Expect(env.Client.Get(ctx, key, d)).To(Succeed())
	g.Expect(d.Generation).To(Equal(generation), "the returning operator redeployed the integration")
	out, _, _ = cli(t, admin, "get", "--orphaned", "-n", apps)
	g.Expect(out).NotTo(ContainSubstring("left-behind"))
}

// TestAnOperatorLimitedToANamespaceNeverServesAnother: assignment from
// another namespace is refused at admission; a resource that was there
// before is reported as an orphan and never reconciled.
func TestAnOperatorLimitedToANamespaceNeverServesAnother(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ensureDefault(t)
	ops, teamA, teamB := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	early := harness.NewIntegration(teamB, "was-here-before", "scoped", 1)
	g.Expect(env.Client.Create(ctx, early)).To(Succeed())
	install(t, ops, "scoped", "--watch-namespaces", teamA)

	inA := harness.NewIntegration(teamA, "in-team-a", "scoped", 1)
	g.Expect(env.Client.Create(ctx, inA)).To(Succeed())
	g.Eventually(func() error { return env.RunningUnder(client.ObjectKeyFromObject(inA), "scoped") }, timeout, poll).Should(Succeed())

	err := refused(t, env.Client, harness.NewIntegration(teamB, "in-team-b", "scoped", 1))
	g.Expect(err.Error()).To(ContainSubstring("operator scoped does not serve namespace " + teamB))

	key := client.ObjectKeyFromObject(early)
	g.Eventually(func() string {
		cur := &camelv1.Integration{}
		_ = env.Client.Get(ctx, key, cur)
		if c := cur.Status.GetCondition(camelv1.ConditionOperatorAvailable); c != nil {
			return c.Reason
		}
		return ""
	}, timeout, poll).Should(Equal("NotServingNamespace"))
	g.Consistently(func() error {
		cur := &camelv1.Integration{}
		if err := env.Client.Get(ctx, key, cur); err != nil {
			return err
		}
		if cur.Status.Phase != "" || cur.Status.Ownership.Owner != "" {
			return fmt.Errorf("reconciled: phase %q owner %q", cur.Status.Phase, cur.Status.Ownership.Owner)
		}
		if !apierrors.IsNotFound(env.Client.Get(ctx, key, &appsv1.Deployment{})) {
			return fmt.Errorf("a Deployment exists")
		}
		return nil
	}, 5*time.Second, time.Second).Should(Succeed())
}

// TestAnOperatorIsLimitedByItsGrantsAlone: the namespaces policy takes no
// parameter; it knows that an operator is limited, and where it serves,
// from the RBAC grants that caravan install gives a limited operator
// (NamespacesGrants). An operator that registered itself, without them,
// is limited nowhere, whatever its registration says; with them, every
// namespace but the ones they name is refused; without them again, every
// namespace may assign to it.
func TestAnOperatorIsLimitedByItsGrantsAlone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ensureDefault(t)
	ops, apps := env.Namespace(t), env.Namespace(t)
	const id = "self-registered"
	installer := &installpkg.Installer{Client: env.Client, Out: io.Discard}
	g.Expect(installer.Install(ctx, ops, installpkg.AdmissionPolicies())).To(Succeed())
	iop := &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: id},
		Spec: camelv1alpha1.IntegrationOperatorSpec{WatchNamespaces: []string{ops}}}
	g.Expect(env.Client.Create(ctx, iop)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, iop) })
	admitted := func(ns, name string) func() error {
		return func() error {
			it := harness.NewIntegration(ns, name, id, 1)
			if err := env.Client.Create(ctx, it); err != nil {
				return err
			}
			return env.Client.Delete(ctx, it)
		}
	}

	t.Log("registered as limited to one namespace, but granted nothing: every namespace may assign to it")
	g.Expect(admitted(apps, "ungranted")()).To(Succeed())

	t.Log("with the grants of an operator limited to that namespace, the others are refused")
	grants := installpkg.NamespacesGrants(installpkg.Config{ID: id, Namespace: ops, WatchNamespaces: []string{ops}})
	g.Expect(grants).NotTo(BeEmpty())
	g.Expect(installer.Install(ctx, ops, grants)).To(Succeed())
	removeGrants := func() {
		for _, o := range grants {
			g.Expect(client.IgnoreNotFound(env.Client.Delete(ctx, o))).To(Succeed())
		}
	}
	t.Cleanup(removeGrants)
	err := refused(t, env.Client, harness.NewIntegration(apps, "limited", id, 1))
	g.Expect(err.Error()).To(ContainSubstring("operator " + id + " does not serve namespace " + apps))
	g.Expect(admitted(ops, "served")()).To(Succeed())

	t.Log("without them again, every namespace may assign to it")
	removeGrants()
	g.Eventually(admitted(apps, "unlimited"), 30*time.Second, time.Second).Should(Succeed())
}

// TestAReinstallRetiresTheNamespacesPolicyOfEarlierVersions: earlier
// versions bound a namespaces policy once per limited operator, with its
// registration as parameter. Installing the operator again deletes its
// binding, and the policy with the last one, and the operator stays
// limited, by its grants.
func TestAReinstallRetiresTheNamespacesPolicyOfEarlierVersions(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ensureDefault(t)
	ops, apps, other := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	const id, legacy = "legacy-limited", "caravan-operator-namespaces"
	policy := &admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: legacy},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			ParamKind:     &admissionv1.ParamKind{APIVersion: camelv1alpha1.GroupVersion.String(), Kind: "IntegrationOperator"},
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule: admissionv1.Rule{APIGroups: []string{camelv1.GroupVersion.Group}, APIVersions: []string{"*"},
						Resources: []string{"integrations"}}}}}},
			// What it refused is no matter here: this one admits all.
			Validations: []admissionv1.Validation{{Expression: `has(params.metadata.name)`}},
		}}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: legacy + "-" + id},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: legacy,
			ParamRef:          &admissionv1.ParamRef{Name: id, ParameterNotFoundAction: ptr.To(admissionv1.AllowAction)},
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}}}
	iop := &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: id},
		Spec: camelv1alpha1.IntegrationOperatorSpec{WatchNamespaces: []string{apps}}}
	for _, o := range []client.Object{policy, binding, iop} {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed())
	}
	t.Cleanup(func() {
		for _, o := range []client.Object{binding, policy} {
			_ = env.Client.Delete(ctx, o)
		}
	})
	admin := env.Kubeconfig(t, "admin", "system:masters")
	out, errOut, err := cli(t, admin, "install", "-n", ops, "-x", id, "--watch-namespaces", apps, "--force")
	g.Expect(err).NotTo(HaveOccurred(), "%s\n%s", out, errOut)
	t.Cleanup(func() { _, _, _ = cli(t, admin, "uninstall", "-n", ops, "-x", id) })
	g.Expect(out).To(ContainSubstring("ValidatingAdmissionPolicyBinding " + legacy + "-" + id + " pruned"))
	g.Expect(out).To(ContainSubstring("ValidatingAdmissionPolicy " + legacy + " pruned"))
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(policy), policy))).To(BeTrue())

	t.Log("the operator stays limited, now by its grants")
	err = refused(t, env.Client, harness.NewIntegration(other, "elsewhere", id, 1))
	g.Expect(err.Error()).To(ContainSubstring("operator " + id + " does not serve namespace " + other))
}

// TestOnlyTheDefaultOperatorWatchesTheWholeCluster: with the admission
// policies installed, the API server mirrors the operator-id label, so an
// operator other than the default one watches nothing beyond its share;
// the default operator keeps the metadata watch it needs to adopt
// unassigned resources and mark orphans.
func TestOnlyTheDefaultOperatorWatchesTheWholeCluster(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ensureDefault(t)
	ops, apps := env.Namespace(t), env.Namespace(t)
	install(t, ops, "share-only")
	g.Eventually(clusterWatch(t, "caravan-system", "camel-k"), timeout, poll).Should(Equal(1.0))
	g.Eventually(clusterWatch(t, ops, "share-only"), timeout, poll).Should(BeZero())

	t.Log("the label follows the annotation at admission: a move to share-only works without its metadata watch")
	it := harness.NewIntegration(apps, "moved-in", "camel-k", 1)
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	g.Eventually(func() error { return env.RunningUnder(client.ObjectKeyFromObject(it), "camel-k") }, timeout, poll).Should(Succeed())
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"share-only"}}}`, camelv1.OperatorIDAnnotation)
	g.Expect(env.Client.Patch(ctx, it, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
	g.Eventually(func() error { return env.RunningUnder(client.ObjectKeyFromObject(it), "share-only") }, timeout, poll).Should(Succeed())
}

// installRelyingOnLabelPolicy installs operator id, with the default
// operator, in a namespace of its own, and waits until it relies on the
// label policy (it keeps no cluster watch). It returns a namespace for
// the apps and the operator's cluster-watch gauge.
func installRelyingOnLabelPolicy(t *testing.T, id string) (apps string, watching func() (float64, error)) {
	t.Helper()
	ensureDefault(t)
	ops := env.Namespace(t)
	apps = env.Namespace(t)
	install(t, ops, id)
	watching = clusterWatch(t, ops, id)
	NewWithT(t).Eventually(watching, timeout, poll).Should(BeZero())
	return apps, watching
}

// TestAnOperatorMirrorsLabelsItselfOnceTheAPIServerNoLongerDoes: when the
// label policy goes away (uninstalled by hand), an operator that relied on
// it takes the cluster watch on, so that resources assigned to it are
// still labelled and reconciled.
func TestAnOperatorMirrorsLabelsItselfOnceTheAPIServerNoLongerDoes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	apps, watching := installRelyingOnLabelPolicy(t, "self-mirror")

	binding := &admissionv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: installpkg.LabelPolicy}}
	g.Expect(env.Client.Delete(ctx, binding)).To(Succeed())
	t.Cleanup(func() {
		installer := &installpkg.Installer{Client: env.Client, Out: io.Discard}
		if err := installer.Install(ctx, "caravan-system", installpkg.AdmissionPolicies()); err != nil {
			t.Errorf("restoring the admission policies: %v", err)
		}
		// The tests that follow rely on the label policy: wait until
		// the API server applies it again.
		waitLabelPolicyActs(t, apps)
	})

	t.Log("an integration written without the label is labelled and run by the operator itself")
	it := harness.NewIntegration(apps, "unlabelled", "self-mirror", 1)
	g.Eventually(func() string { return admittedLabel(it) }, timeout, poll).Should(BeEmpty(), "the API server still mirrors the label")
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	g.Eventually(func() error { return env.RunningUnder(client.ObjectKeyFromObject(it), "self-mirror") }, timeout, poll).Should(Succeed())

	t.Log("it takes the whole cluster's watch on, for the moves to it")
	g.Eventually(watching, timeout, poll).Should(Equal(1.0))
}

// TestAnOperatorDoesNotTrustALabelPolicyThatDoesNotAct: the label policy
// and its binding exist but the policy never matches (as on a server whose
// admission plugin is off): an operator that relied on it finds out by a
// dry run, takes the cluster watch on and mirrors the labels itself.
func TestAnOperatorDoesNotTrustALabelPolicyThatDoesNotAct(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	apps, watching := installRelyingOnLabelPolicy(t, "distrustful")

	policy := &admissionv1.MutatingAdmissionPolicy{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: installpkg.LabelPolicy}, policy)).To(Succeed())
	before := policy.DeepCopy()
	policy.Spec.MatchConditions = append(policy.Spec.MatchConditions, admissionv1.MatchCondition{Name: "never", Expression: "false"})
	g.Expect(env.Client.Patch(ctx, policy, client.MergeFrom(before))).To(Succeed())
	t.Cleanup(func() {
		// The condition was added by this test's field manager: an
		// apply by the installer would keep it, so it goes the same way.
		cur := &admissionv1.MutatingAdmissionPolicy{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: installpkg.LabelPolicy}, cur); err != nil {
			t.Errorf("restoring the label policy: %v", err)
			return
		}
		restored := cur.DeepCopy()
		restored.Spec.MatchConditions = before.Spec.MatchConditions
		if err := env.Client.Patch(ctx, restored, client.MergeFrom(cur)); err != nil {
			t.Errorf("restoring the label policy: %v", err)
		}
		waitLabelPolicyActs(t, apps)
	})
	it := harness.NewIntegration(apps, "unlabelled", "distrustful", 1)
	g.Eventually(func() string { return admittedLabel(it) }, timeout, poll).Should(BeEmpty(), "the API server still mirrors the label")

	t.Log("the policy's objects are all there, yet the operator takes the whole cluster's watch on")
	g.Eventually(watching, timeout, poll).Should(Equal(1.0))
	t.Log("and an integration written without the label is labelled and run by the operator itself")
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	g.Eventually(func() error { return env.RunningUnder(client.ObjectKeyFromObject(it), "distrustful") }, timeout, poll).Should(Succeed())
}

// clusterWatch reads the gauge caravan_cluster_watch of operator id; it
// fails while the operator does not serve it yet, so that a wait for 0
// waits for the operator's decision, not for its absence.
func clusterWatch(t *testing.T, ns, id string) func() (float64, error) {
	url := env.OperatorMetricsURL(t, ns, id)
	return func() (float64, error) {
		v, found := env.Metric(url, "caravan_cluster_watch")
		if !found {
			return 0, fmt.Errorf("operator %s does not serve caravan_cluster_watch yet", id)
		}
		return v, nil
	}
}

// admittedLabel is the operator-id label the API server gives it at
// admission, seen by a server-side dry run of its creation.
func admittedLabel(it *camelv1.Integration) string {
	probe := it.DeepCopy()
	_ = env.Client.Create(context.Background(), probe, client.DryRunAll)
	return probe.Labels[camelv1.OperatorIDLabel]
}

// waitLabelPolicyActs waits until the API server applies the label policy
// again (in ns), which the tests that follow rely on.
func waitLabelPolicyActs(t *testing.T, ns string) {
	t.Helper()
	probe := harness.NewIntegration(ns, "probe", "camel-k", 1)
	NewWithT(t).Eventually(func() string { return admittedLabel(probe) }, timeout, poll).Should(Equal("camel-k"))
}
