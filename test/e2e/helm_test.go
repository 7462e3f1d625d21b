package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"helm.sh/helm/v3/pkg/action"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/packaging"
	"github.com/caravan-dev/caravan/test/harness"
)

// sourceRoot is the root of the source tree.
func sourceRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// helmConfig is Helm's action configuration for namespace, as the
// administrator, with releases kept in Secrets as the helm command does.
func helmConfig(t *testing.T, namespace string) *action.Configuration {
	t.Helper()
	kubeconfig := env.Kubeconfig(t, "helm-admin", "system:masters")
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &kubeconfig, &namespace
	cfg := &action.Configuration{}
	if err := cfg.Init(flags, namespace, "secret", t.Logf); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestAnOperatorInstalledFromTheHelmChartRunsIntegrations: the chart, installed with the helm
// command from a values file, runs an operator pod of the image built from this tree that
// registers and runs an integration; helm upgrade keeps what a user set on the platform; helm
// uninstall removes the operator and leaves the integration.
func TestAnOperatorInstalledFromTheHelmChartRunsIntegrations(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ops, apps := env.Namespace(t), env.Namespace(t)
	ch, err := packaging.LoadChart(sourceRoot())
	g.Expect(err).NotTo(HaveOccurred())
	kubeconfig := env.Kubeconfig(t, "helm-admin", "system:masters")
	helm := func(args ...string) {
		t.Helper()
		out, err := harness.Helm(t, sourceRoot(), kubeconfig, append(args, "-n", ops)...)
		g.Expect(err).NotTo(HaveOccurred(), "helm %s:\n%s", strings.Join(args, " "), out)
	}
	valuesFile := func(values map[string]any) string {
		t.Helper()
		data, err := yaml.Marshal(values)
		g.Expect(err).NotTo(HaveOccurred())
		f := filepath.Join(t.TempDir(), "values.yaml")
		g.Expect(os.WriteFile(f, data, 0o644)).To(Succeed())
		return f
	}
	values := map[string]any{
		"operatorId": "from-helm", "image": env.OperatorImage(t), "skipAdmission": true, "skipKamelets": true,
		"registry":          map[string]any{"address": env.Cluster.RegistryAddress, "insecure": true},
		"heartbeatInterval": "2s",
		// Other tests' installs made the shared objects already.
		"sharedResources": false,
	}
	helm("install", "from-helm", packaging.ChartDir, "-f", valuesFile(values))
	uninstalled := false
	t.Cleanup(func() {
		if !uninstalled {
			_, _ = harness.Helm(t, sourceRoot(), kubeconfig, "uninstall", "from-helm", "-n", ops)
		}
	})

	pod := runningPod(t, ops, "from-helm")
	g.Expect(pod.Spec.Containers[0].Image).To(Equal(env.OperatorImage(t)))
	it := newIntegration(apps, "from-helm-app", "from-helm", 1)
	create(t, it)
	waitRunningUnder(t, client.ObjectKeyFromObject(it), "from-helm")
	iop := &camelv1alpha1.IntegrationOperator{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "from-helm"}, iop)).To(Succeed())
	g.Expect(iop.Status.Namespace).To(Equal(ops))
	g.Expect(iop.Status.Version).To(Equal(ch.Metadata.AppVersion))
	g.Expect(iop.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "Helm"))

	t.Log("helm upgrade keeps what a user set on the platform, even a field the chart sets and the upgrade changes")
	itp := &camelv1.IntegrationPlatform{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ops, Name: "from-helm"}, itp)).To(Succeed())
	g.Expect(env.Client.Patch(ctx, itp, client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"build":{"maxRunningBuilds":7,"registry":{"organization":"team-a"}}}}`)))).To(Succeed())
	values["logVerbosity"] = 1
	values["registry"] = map[string]any{"address": env.Cluster.RegistryAddress, "insecure": false}
	helm("upgrade", "from-helm", packaging.ChartDir, "-f", valuesFile(values))
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ops, Name: "from-helm"}, itp)).To(Succeed())
	g.Expect(itp.Spec.Build.MaxRunningBuilds).To(HaveValue(BeEquivalentTo(7)), "the upgrade overwrote the platform")
	g.Expect(itp.Spec.Build.Registry.Organization).To(Equal("team-a"))
	g.Expect(itp.Spec.Build.Registry.Insecure).To(BeTrue(), "the upgrade rendered the platform again")

	t.Log("helm uninstall removes the operator and keeps its integration")
	helm("uninstall", "from-helm")
	uninstalled = true
	err = env.Client.Get(ctx, client.ObjectKey{Name: "from-helm"}, &camelv1alpha1.IntegrationOperator{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the registration outlived the release")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(it), it)).To(Succeed())
	g.Eventually(func() []corev1.Pod { return operatorPods(t, ops, "from-helm") }, timeout, poll).Should(BeEmpty())
}

// TestTheSharedPoliciesOutliveTheHelmReleaseThatMadeThem: of two releases of the chart, the
// first holds the objects every operator shares (sharedResources). Uninstalling it leaves the
// admission policies in place: a user without the verb use on the second release's operator is
// still refused when assigning work to it.
func TestTheSharedPoliciesOutliveTheHelmReleaseThatMadeThem(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	opsA, opsB, apps := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	ch, err := packaging.LoadChart(sourceRoot())
	g.Expect(err).NotTo(HaveOccurred())

	t.Log("release shared-a takes the shared objects over, as the first release on a cluster holds them")
	// Other tests' installs made them: Helm adopts an object whose metadata names the release.
	shared := append(install.AdmissionPolicies(), &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: install.ReaderRole}})
	for _, name := range install.SharedRoles {
		shared = append(shared, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}
	adopt := fmt.Sprintf(`{"metadata":{"labels":{"app.kubernetes.io/managed-by":"Helm"},`+
		`"annotations":{"meta.helm.sh/release-name":"shared-a","meta.helm.sh/release-namespace":%q}}}`, opsA)
	var made []client.Object // the shared objects the release makes, which the test removes again
	for _, o := range shared {
		err := env.Client.Patch(ctx, o.DeepCopyObject().(client.Object), client.RawPatch(types.MergePatchType, []byte(adopt)))
		if apierrors.IsNotFound(err) {
			made = append(made, o)
			continue
		}
		g.Expect(err).NotTo(HaveOccurred())
	}
	// The other tests run without admission policies: what the release made goes when this test ends.
	t.Cleanup(func() {
		for _, o := range made {
			if err := env.Client.Delete(context.Background(), o.DeepCopyObject().(client.Object)); client.IgnoreNotFound(err) != nil {
				t.Errorf("removing %T %s: %v", o, o.GetName(), err)
			}
		}
	})
	values := func(id string, sharedResources bool) map[string]any {
		return map[string]any{"operatorId": id, "image": env.OperatorImage(t), "skipKamelets": true, "sharedResources": sharedResources,
			"registry": map[string]any{"address": env.Cluster.RegistryAddress, "insecure": true}, "heartbeatInterval": "2s"}
	}
	cfgA, cfgB := helmConfig(t, opsA), helmConfig(t, opsB)
	instA := action.NewInstall(cfgA)
	instA.ReleaseName, instA.Namespace = "shared-a", opsA
	_, err = instA.RunWithContext(ctx, ch, values("shared-a", true))
	g.Expect(err).NotTo(HaveOccurred())
	uninstalledA := false
	t.Cleanup(func() {
		if !uninstalledA {
			_, _ = action.NewUninstall(cfgA).Run("shared-a")
		}
	})
	instB := action.NewInstall(cfgB)
	instB.ReleaseName, instB.Namespace = "shared-b", opsB
	_, err = instB.RunWithContext(ctx, ch, values("shared-b", false))
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _, _ = action.NewUninstall(cfgB).Run("shared-b") })

	t.Log("mallory, who may use shared-a only, is refused an assignment to shared-b")
	for _, role := range []string{"edit", "shared-a-operator-user"} {
		create(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "mallory-" + role},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "mallory"}}})
	}
	mallory := env.UserClient(t, "mallory")
	refusedToB := func() error {
		err := mallory.Create(ctx, newIntegration(apps, "to-b", "shared-b", 1))
		if err == nil {
			_ = env.Client.Delete(ctx, newIntegration(apps, "to-b", "shared-b", 1))
			return errorf("mallory assigned work to shared-b")
		}
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "needs the verb use on integrationoperators/shared-b") {
			return errorf("not the assignment policy's refusal: %v", err)
		}
		return nil
	}
	g.Eventually(refusedToB, timeout, poll).Should(Succeed())
	g.Eventually(func() error { return mallory.Create(ctx, newIntegration(apps, "to-a", "shared-a", 1)) }, timeout, poll).Should(Succeed())

	t.Log("helm uninstall of shared-a keeps the shared objects: the assignment is still refused")
	_, err = action.NewUninstall(cfgA).Run("shared-a")
	g.Expect(err).NotTo(HaveOccurred())
	uninstalledA = true
	for _, o := range shared {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopyObject().(client.Object))).To(Succeed(),
			"%T %s went with the release", o, o.GetName())
	}
	g.Expect(refusedToB()).To(Succeed())
}
