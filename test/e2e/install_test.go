package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	installpkg "github.com/caravan-dev/caravan/internal/install"
)

// cli runs the built binary against the test cluster as kubeconfig's user (see harness.Env.CLI).
func cli(t *testing.T, kubeconfig string, args ...string) (string, string, error) {
	t.Helper()
	return env.CLI(t, kubeconfig, args...)
}

func uninstallOnCleanup(t *testing.T, kubeconfig, ns, id string) {
	t.Cleanup(func() { _, _, _ = cli(t, kubeconfig, "uninstall", "-n", ns, "-x", id) })
}

// TestCLIInstall: operators installed side by side in one namespace and
// in another run as pods of the process node with their own identities and
// reconcile their integrations; a duplicate install is refused, --force
// upgrades in place only, a failed install leaves nothing behind, and
// uninstall removes the operator but not its integrations nor the CRDs.
func TestCLIInstall(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	admin := env.Kubeconfig(t, "admin", "system:masters")
	shared, other, apps := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	for _, inst := range []struct{ ns, id string }{{shared, "inst-a"}, {shared, "inst-b"}, {other, "inst-c"}} {
		uninstallOnCleanup(t, admin, inst.ns, inst.id)
		// The admission policies are cluster-wide; test/tenancy tests them on
		// a cluster of their own.
		out, errOut, err := cli(t, admin, "install", "--skip-kamelets", "-n", inst.ns, "-x", inst.id, "--wait", "--skip-admission")
		g.Expect(err).NotTo(HaveOccurred(), "install %s: %s\n%s", inst.id, out, errOut)
		g.Expect(out).To(ContainSubstring("Deployment " + inst.ns + "/" + inst.id + "-operator created"))
		g.Expect(out).To(ContainSubstring("operator " + inst.id + " is ready"))
	}
	g.Expect(operatorPods(t, shared, "inst-a")).To(HaveLen(1), "inst-a runs no pod")

	t.Log("each operator reconciles its own integration, as its ServiceAccount")
	for _, id := range []string{"inst-a", "inst-b", "inst-c"} {
		it := newIntegration(apps, "app-of-"+id, id, 1)
		create(t, it)
		waitRunningUnder(t, client.ObjectKeyFromObject(it), id)
	}
	iop := &camelv1alpha1.IntegrationOperator{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "inst-a"}, iop)).To(Succeed())
	g.Expect(iop.Status.Namespace).To(Equal(shared))

	t.Log("a duplicate install is refused; --force upgrades in place; another namespace is never taken over")
	_, errOut, err := cli(t, admin, "install", "--skip-kamelets", "-n", shared, "-x", "inst-a")
	g.Expect(err).To(HaveOccurred())
	g.Expect(errOut).To(ContainSubstring(`operator id "inst-a" is already installed in namespace ` + shared))
	platform := &camelv1.IntegrationPlatform{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: shared, Name: "inst-a"}, platform)).To(Succeed())
	edited := platform.DeepCopy()
	edited.Spec.Build.Registry.Organization = "team-a"
	g.Expect(env.Client.Patch(ctx, edited, client.MergeFrom(platform))).To(Succeed())
	out, errOut, err := cli(t, admin, "install", "--skip-kamelets", "-n", shared, "-x", "inst-a", "--force", "--wait", "--skip-admission")
	g.Expect(err).NotTo(HaveOccurred(), "%s\n%s", out, errOut)
	g.Expect(out).To(ContainSubstring("IntegrationPlatform " + shared + "/inst-a kept as it is"))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(platform), platform)).To(Succeed())
	g.Expect(platform.Spec.Build.Registry.Organization).To(Equal("team-a"), "the re-install reset the user's platform setting")
	g.Expect(platform.Spec.Build.Registry.Address).To(Equal(env.Cluster.RegistryAddress))
	_, errOut, err = cli(t, admin, "install", "--skip-kamelets", "-n", other, "-x", "inst-a", "--force")
	g.Expect(err).To(HaveOccurred())
	g.Expect(errOut).To(ContainSubstring(`operator id "inst-a" is registered to namespace "` + shared + `"`))
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: other, Name: "inst-a-operator"}, &corev1.ServiceAccount{})).
		To(Satisfy(apierrors.IsNotFound), "the refused install created objects")

	t.Log("an invalid id is refused before anything is written")
	_, errOut, err = cli(t, admin, "install", "--skip-kamelets", "-n", shared, "-x", "Inst_A")
	g.Expect(err).To(HaveOccurred())
	g.Expect(errOut).To(ContainSubstring("DNS-1123 label"))

	t.Log("--dry-run prints the manifests and writes nothing")
	out, _, err = cli(t, admin, "install", "-n", shared, "-x", "inst-dry", "--dry-run", "-o", "yaml")
	g.Expect(err).NotTo(HaveOccurred())
	for _, want := range []string{"kind: Deployment", "name: inst-dry-operator", "kind: IntegrationOperator", "name: inst-dry-operator-user"} {
		g.Expect(out).To(ContainSubstring(want))
	}
	err = env.Client.Get(ctx, client.ObjectKey{Name: "inst-dry"}, &camelv1alpha1.IntegrationOperator{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue())

	t.Log("uninstall removes the operator, not its integrations nor the CRDs")
	out, errOut, err = cli(t, admin, "uninstall", "-n", shared, "-x", "inst-b")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	g.Expect(out).To(ContainSubstring("Deployment " + shared + "/inst-b-operator deleted, with its pods"))
	g.Expect(operatorPods(t, shared, "inst-b")).To(BeEmpty(), "uninstall left the operator's pods")
	err = env.Client.Get(ctx, client.ObjectKey{Name: "inst-b"}, &camelv1alpha1.IntegrationOperator{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: apps, Name: "app-of-inst-b"}, &camelv1.Integration{})).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "integrations.camel.apache.org"}, crdObject())).To(Succeed())
}

// TestCLIInstallThatFailsRemovesWhatItCreated: a user who may do
// everything an install needs but bind cluster roles gets an error, and
// the objects created before the failure are gone.
func TestCLIInstallThatFailsRemovesWhatItCreated(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "installer-without-bindings"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"namespaces", "serviceaccounts", "configmaps", "services", "events"}, Verbs: []string{"*"}},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"*"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"*"}},
			{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"*"}},
			{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"*"}},
			{APIGroups: []string{"camel.apache.org"}, Resources: []string{"*"}, Verbs: []string{"*"}},
			{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"}, Verbs: []string{"*"}},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "installer-without-bindings"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "half-admin"}},
	}
	g.Expect(env.Client.Create(ctx, role)).To(Succeed())
	g.Expect(env.Client.Create(ctx, binding)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, binding); _ = env.Client.Delete(ctx, role) })

	out, errOut, err := cli(t, env.Kubeconfig(t, "half-admin"), "install", "-n", ns, "-x", "inst-fail", "--skip-admission")
	g.Expect(err).To(HaveOccurred(), out)
	g.Expect(errOut).To(ContainSubstring("ClusterRoleBinding " + installpkg.ClusterRoleName("inst-fail", ns)))
	g.Expect(out).To(ContainSubstring("removed (the install failed)"))
	for _, obj := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "inst-fail-operator"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: installpkg.ClusterRoleName("inst-fail", ns)}},
		&camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: "inst-fail"}},
	} {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%T %s left behind", obj, obj.GetName())
	}
	g.Expect(strings.Count(out, "removed (the install failed)")).To(BeNumerically(">=", 2))
}

// TestConcurrentInstallsOfOneIDLeaveOneWinner: two installs of one id in
// two namespaces at once, round after round: exactly one succeeds; the
// other fails, names the namespace that holds the id, and leaves nothing
// of its own behind.
func TestConcurrentInstallsOfOneIDLeaveOneWinner(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	admin := env.Kubeconfig(t, "admin", "system:masters")
	img := env.OperatorImage(t)
	for round := range 4 {
		id := fmt.Sprintf("race-%d", round)
		namespaces := []string{env.Namespace(t), env.Namespace(t)}
		type result struct {
			errOut string
			err    error
		}
		results := make([]result, 2)
		var wg sync.WaitGroup
		for k, ns := range namespaces {
			uninstallOnCleanup(t, admin, ns, id)
			wg.Go(func() {
				_, errOut, err := cli(t, admin, "install", "-n", ns, "-x", id, "--image", img, "--skip-admission", "--skip-kamelets")
				results[k] = result{errOut, err}
			})
		}
		wg.Wait()
		var winners []int
		for k, r := range results {
			if r.err == nil {
				winners = append(winners, k)
			}
		}
		g.Expect(winners).To(HaveLen(1), "round %d: %d installs succeeded: %+v", round, len(winners), results)
		won, lost := namespaces[winners[0]], namespaces[1-winners[0]]
		g.Expect(results[1-winners[0]].errOut).To(ContainSubstring(`operator id "` + id + `" is registered to namespace "` + won + `"`))
		iop := &camelv1alpha1.IntegrationOperator{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: id}, iop)).To(Succeed())
		g.Expect(iop.Annotations).To(HaveKeyWithValue(installpkg.InstalledNamespaceAnnotation, won))
		for _, obj := range []client.Object{
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: lost, Name: id + "-operator"}},
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: lost, Name: id + "-operator"}},
			&camelv1.IntegrationPlatform{ObjectMeta: metav1.ObjectMeta{Namespace: lost, Name: id}},
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: installpkg.ClusterRoleName(id, lost)}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: installpkg.ClusterRoleName(id, lost)}},
		} {
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "round %d: the refused install left %T %s", round, obj, obj.GetName())
		}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: won, Name: id + "-operator"}, &appsv1.Deployment{})).To(Succeed())
	}
}

// kubectlApply applies manifests with the local cluster's kubectl, as
// the administrator, server-side.
func kubectlApply(t *testing.T, manifests string) (string, error) {
	t.Helper()
	cmd := exec.Command(env.Binaries.Kubectl, "--kubeconfig", env.Cluster.Kubeconfig, "apply", "--server-side", "-f", "-")
	cmd.Stdin = strings.NewReader(manifests)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestTheDryRunOutputAppliesAsItIs: `install --dry-run -o yaml`, the CRDs
// first (--crds=only), then the rest (--crds=skip), applied by kubectl to
// a namespace that does not exist yet, gives a running, registered
// operator.
func TestTheDryRunOutputAppliesAsItIs(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	admin := env.Kubeconfig(t, "admin", "system:masters")
	ns := namespaceFor(t, "gitops")
	uninstallOnCleanup(t, admin, ns, "gitops")
	t.Cleanup(func() { _ = env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}) })
	args := []string{"install", "--dry-run", "-o", "yaml", "-n", ns, "-x", "gitops", "--image", env.OperatorImage(t),
		"--skip-admission", "--skip-kamelets"}

	t.Log("-o yaml without --dry-run prints the manifests and applies nothing, as kamel install -o did")
	out, errOut, err := cli(t, admin, "install", "--skip-kamelets", "-o", "yaml", "-n", ns, "-x", "gitops", "--image", env.OperatorImage(t), "--skip-admission")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	g.Expect(out).To(And(HavePrefix("apiVersion: v1\nkind: Namespace\n"), ContainSubstring("kind: Deployment")))
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}))).To(BeTrue(), "-o yaml created the namespace")
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: "gitops"}, &camelv1alpha1.IntegrationOperator{}))).To(BeTrue(),
		"-o yaml registered the operator")

	for _, crds := range []string{"only", "skip"} {
		out, errOut, err := cli(t, admin, append(args, "--crds="+crds)...)
		g.Expect(err).NotTo(HaveOccurred(), errOut)
		if crds == "only" {
			g.Expect(out).NotTo(ContainSubstring("kind: Deployment"))
		} else {
			g.Expect(out).To(HavePrefix("apiVersion: v1\nkind: Namespace\n"))
			g.Expect(out).NotTo(ContainSubstring("kind: CustomResourceDefinition"))
		}
		applied, err := kubectlApply(t, out)
		g.Expect(err).NotTo(HaveOccurred(), applied)
	}
	runningPod(t, ns, "gitops")
	g.Eventually(func() string {
		iop := &camelv1alpha1.IntegrationOperator{}
		_ = env.Client.Get(ctx, client.ObjectKey{Name: "gitops"}, iop)
		return iop.Status.Namespace
	}, timeout, poll).Should(Equal(ns))

	_, errOut, err = cli(t, admin, "install", "--skip-kamelets", "-n", ns, "-x", "gitops", "--crds=skip")
	g.Expect(err).To(HaveOccurred())
	g.Expect(errOut).To(ContainSubstring("--crds is for --dry-run"))
}

// namespaceFor is a fresh namespace name for the test, not created.
func namespaceFor(t *testing.T, prefix string) string {
	t.Helper()
	return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1_000_000_000)
}
