// Package kustomize applies the kustomize base with the real kubectl onto an API server that has
// none of Caravan's CRDs, as a first install does.
package kustomize

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/packaging"
	"github.com/caravan-dev/caravan/test/harness"
)

// env is an API server without Caravan's CRDs.
var env *harness.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	os.Exit(harness.Main(m, harness.Options{SkipCRDs: true}, &env))
}

// TestTheBaseInstallsOntoAClusterWithoutCaravansCRDsAsDocumented: where no CRD of Caravan's
// exists yet, the base alone fails (kubectl maps every object before it applies any, and the
// platform and the registration are of Caravan's kinds). The documented steps
// work: the CRDs, a wait for them to be established, then the base, which applies again without
// error.
func TestTheBaseInstallsOntoAClusterWithoutCaravansCRDsAsDocumented(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(env.Client.List(ctx, &camelv1.IntegrationList{})).NotTo(Succeed(), "the API server serves Caravan's CRDs already")
	cacheDir, err := localcluster.DefaultCacheDir()
	g.Expect(err).NotTo(HaveOccurred())
	bins, missing := localcluster.FindBinaries(cacheDir)
	g.Expect(missing).To(BeEmpty(), "the cluster binaries, kubectl among them, are built into the cache first")
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	kubeconfig := env.Kubeconfig(t, "gitops", "system:masters")
	kubectl := func(args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command(bins.Kubectl, args...)
		cmd.Dir, cmd.Env = root, append(os.Environ(), "KUBECONFIG="+kubeconfig)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	base, crds := filepath.Join(packaging.KustomizeDir, "base"), filepath.Join(packaging.KustomizeDir, "crds")
	out, err := kubectl("apply", "--server-side", "-k", base)
	g.Expect(err).To(HaveOccurred(), "the base applied in one command where no CRD existed:\n%s", out)
	g.Expect(out).To(ContainSubstring("ensure CRDs are installed first"))
	for _, step := range [][]string{
		{"apply", "--server-side", "-k", crds},
		{"wait", "--for=condition=Established", "crd", "-l", "app.kubernetes.io/part-of=caravan", "--timeout=60s"},
		{"apply", "--server-side", "-k", base},
	} {
		out, err := kubectl(step...)
		g.Expect(err).NotTo(HaveOccurred(), "kubectl %v:\n%s", step, out)
	}

	installed := packaging.Base(packaging.Release{Version: "dev"})
	for _, name := range []string{"integrations.camel.apache.org", "integrationoperators.camel.apache.org", "kamelets.camel.apache.org"} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: name}, crd)).To(Succeed())
	}
	d := &appsv1.Deployment{}
	g.Expect(env.Client.Get(ctx, install.OperatorDeployment(installed.ID, installed.Namespace), d)).To(Succeed())
	g.Expect(d.Spec.Template.Spec.Containers[0].Env).To(ContainElement(HaveField("Value", installed.ID)))
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: install.ConfinementPolicy}, &admissionv1.ValidatingAdmissionPolicy{})).To(Succeed())
	kamelets := &camelv1.KameletList{}
	g.Expect(env.Client.List(ctx, kamelets, client.InNamespace(installed.Namespace))).To(Succeed())
	g.Expect(kamelets.Items).To(BeEmpty(), "the base ships no Kamelet: the operator installs the catalog of its Camel version")
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: installed.Namespace, Name: installed.ID}, &camelv1.IntegrationPlatform{})).To(Succeed())

	out, err = kubectl("apply", "--server-side", "-k", base)
	g.Expect(err).NotTo(HaveOccurred(), "applying the base again:\n%s", out)

	t.Log("the own-namespace overlay limits the same operator to its namespace")
	out, err = kubectl("apply", "--server-side", "-k", packaging.OwnNamespaceOverlay)
	g.Expect(err).NotTo(HaveOccurred(), "kubectl apply --server-side -k %s:\n%s", packaging.OwnNamespaceOverlay, out)
	g.Expect(env.Client.Get(ctx, install.OperatorDeployment(installed.ID, installed.Namespace), d)).To(Succeed())
	g.Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--watch-namespaces=" + installed.Namespace))
	bindings := &rbacv1.RoleBindingList{}
	g.Expect(env.Client.List(ctx, bindings, client.InNamespace(installed.Namespace))).To(Succeed())
	g.Expect(bindings.Items).To(ContainElement(HaveField("RoleRef.Name", install.NamespacedRoleName(installed.ID, installed.Namespace))))

	t.Log("the example overlay adds operator team-a, in namespace team-a, beside the default one")
	g.Expect(env.Client.Get(ctx, install.OperatorDeployment(installed.ID, installed.Namespace), d)).To(Succeed())
	generation := d.Generation
	out, err = kubectl("apply", "--server-side", "-k", packaging.AnotherOperatorExample)
	g.Expect(err).NotTo(HaveOccurred(), "kubectl apply --server-side -k %s:\n%s", packaging.AnotherOperatorExample, out)
	team := &appsv1.Deployment{}
	g.Expect(env.Client.Get(ctx, install.OperatorDeployment("team-a", "team-a"), team)).To(Succeed())
	g.Expect(team.Spec.Template.Spec.Containers[0].Env).To(ContainElement(And(HaveField("Name", "OPERATOR_ID"), HaveField("Value", "team-a"))))
	g.Expect(team.Spec.Template.Spec.Containers[0].Args).NotTo(ContainElement("--default"))
	g.Expect(team.Spec.Template.Spec.ServiceAccountName).To(Equal(install.OperatorDeployment("team-a", "team-a").Name))
	teamOperator, defaultOperator := &camelv1alpha1.IntegrationOperator{}, &camelv1alpha1.IntegrationOperator{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "team-a"}, teamOperator)).To(Succeed())
	g.Expect(teamOperator.Spec.Default).To(BeFalse())
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: installed.ID}, defaultOperator)).To(Succeed())
	g.Expect(defaultOperator.Spec.Default).To(BeTrue(), "the example overlay took the default from the base's operator")
	crb := &rbacv1.ClusterRoleBinding{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: install.ClusterRoleName("team-a", "team-a")}, crb)).To(Succeed())
	g.Expect(crb.Subjects).To(ConsistOf(HaveField("Namespace", "team-a")))
	g.Expect(env.Client.Get(ctx, install.OperatorDeployment(installed.ID, installed.Namespace), d)).To(Succeed())
	g.Expect(d.Generation).To(Equal(generation), "applying the example overlay changed the default operator's Deployment")
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "team-a"}, &camelv1.IntegrationPlatform{})).To(Succeed())

	t.Log("the watched-namespaces example adds operator team-b of team-b-dev and team-b-prod")
	for _, ns := range []string{"team-b-dev", "team-b-prod"} {
		out, err = kubectl("create", "namespace", ns)
		g.Expect(err).NotTo(HaveOccurred(), "kubectl create namespace %s:\n%s", ns, out)
	}
	out, err = kubectl("apply", "--server-side", "-k", packaging.WatchedNamespacesExample)
	g.Expect(err).NotTo(HaveOccurred(), "kubectl apply --server-side -k %s:\n%s", packaging.WatchedNamespacesExample, out)
	limited := &appsv1.Deployment{}
	g.Expect(env.Client.Get(ctx, install.OperatorDeployment("team-b", "team-b"), limited)).To(Succeed())
	g.Expect(limited.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--watch-namespaces=team-b-dev,team-b-prod"))
	for _, ns := range []string{"team-b-dev", "team-b-prod"} {
		rb := &rbacv1.RoleBinding{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: install.ClusterRoleName("team-b", "team-b")}, rb)).To(Succeed())
		g.Expect(rb.RoleRef.Name).To(Equal(install.NamespacedRoleName("team-b", "team-b")))
		g.Expect(rb.Subjects).To(ConsistOf(And(HaveField("Name", limited.Spec.Template.Spec.ServiceAccountName), HaveField("Namespace", "team-b"))))
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: install.ServesRoleName("team-b", "team-b")}, rb)).To(Succeed())
	}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: install.LimitedRoleName("team-b", "team-b")}, &rbacv1.ClusterRoleBinding{})).To(Succeed())
	registration := &camelv1alpha1.IntegrationOperator{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "team-b"}, registration)).To(Succeed())
	g.Expect(registration.Annotations).To(HaveKeyWithValue(camelv1alpha1.WatchNamespacesFromAnnotation, camelv1alpha1.WatchNamespacesFromOperator),
		"the registration does not ask the operator for its namespaces")
}
