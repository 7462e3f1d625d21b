// Package helmclean checks, on an API server of its own, that the Helm chart's releases and the
// objects they keep for the other tenants are all gone after the documented uninstall:
// helm uninstall of each release, then caravan uninstall --all.
package helmclean

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	"helm.sh/helm/v3/pkg/action"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/packaging"
	"github.com/caravan-dev/caravan/test/harness"
)

// env is the API-only control plane of the test; env.Caravan is the caravan binary built for it.
var env *harness.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	os.Exit(harness.Main(m, harness.Options{BuildCaravan: true}, &env))
}

// TestTheDocumentedUninstallLeavesNothingBehind: two releases of the chart, the first holding
// the shared objects; helm uninstall of both keeps those (the other tenants' protection), and
// caravan uninstall --all then removes them with the CRDs. No object of either release, and no
// shared object of Caravan's, is left on the API server.
func TestTheDocumentedUninstallLeavesNothingBehind(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	opsA, opsB := env.Namespace(t), env.Namespace(t)
	_, file, _, _ := runtime.Caller(0)
	ch, err := packaging.LoadChart(filepath.Join(filepath.Dir(file), "..", ".."))
	g.Expect(err).NotTo(HaveOccurred())
	kubeconfig := env.Kubeconfig(t, "helm-admin", "system:masters")
	helm := func(namespace string) *action.Configuration {
		flags := genericclioptions.NewConfigFlags(false)
		flags.KubeConfig, flags.Namespace = &kubeconfig, &namespace
		cfg := &action.Configuration{}
		g.Expect(cfg.Init(flags, namespace, "secret", t.Logf)).To(Succeed())
		return cfg
	}
	releases := []struct {
		name, namespace string
		shared          bool
	}{{"clean-a", opsA, true}, {"clean-b", opsB, false}}
	for _, r := range releases {
		inst := action.NewInstall(helm(r.namespace))
		inst.ReleaseName, inst.Namespace = r.name, r.namespace
		_, err := inst.RunWithContext(ctx, ch, map[string]any{"operatorId": r.name, "image": "registry.invalid/caravan/operator:test",
			"sharedResources": r.shared, "registry": map[string]any{"address": "registry.invalid"}})
		g.Expect(err).NotTo(HaveOccurred(), "helm install %s", r.name)
	}
	g.Expect(leftovers(t)).NotTo(BeEmpty(), "the releases made nothing the sweep finds")

	t.Log("helm uninstall of both releases keeps the shared objects")
	for _, r := range releases {
		_, err := action.NewUninstall(helm(r.namespace)).Run(r.name)
		g.Expect(err).NotTo(HaveOccurred(), "helm uninstall %s", r.name)
	}
	kept := leftovers(t)
	g.Expect(kept).To(ContainElement(ContainSubstring("/" + install.AssignmentPolicy)))
	g.Expect(kept).To(ContainElement(ContainSubstring("/" + install.EditRole)))

	t.Log("caravan uninstall --all removes them, and the CRDs")
	cmd := exec.Command(env.Caravan, "--kubeconfig", kubeconfig, "uninstall", "--all", "-x", "clean-a", "-n", opsA)
	out, err := cmd.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "%s", out)
	g.Eventually(func() []string { return leftovers(t) }, "60s", "500ms").Should(BeEmpty(), "left behind")
}

// leftovers lists, as "resource namespace/name", every object of the API server whose name
// or labels name Caravan or the test's releases, but the test's namespaces themselves and what
// Kubernetes puts in every namespace.
func leftovers(t *testing.T) []string {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		t.Fatal(err)
	}
	var found []string
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, res := range list.APIResources {
			if strings.Contains(res.Name, "/") || res.Name == "namespaces" || res.Name == "events" ||
				!strings.Contains(strings.Join(res.Verbs, ","), "list") {
				continue
			}
			objs, err := dyn.Resource(gv.WithResource(res.Name)).List(context.Background(), metav1.ListOptions{})
			if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
				continue
			}
			if err != nil {
				t.Fatalf("listing %s: %v", res.Name, err)
			}
			for _, o := range objs.Items {
				if names(o) {
					found = append(found, fmt.Sprintf("%s %s/%s", res.Name, o.GetNamespace(), o.GetName()))
				}
			}
		}
	}
	return found
}

// names tells whether o is Caravan's or one of the test releases'.
func names(o unstructured.Unstructured) bool {
	text := o.GetName()
	for k, v := range o.GetLabels() {
		text += " " + k + "=" + v
	}
	if o.GetName() == "kube-root-ca.crt" || o.GetName() == "default" && o.GetKind() == "ServiceAccount" {
		return false
	}
	return strings.Contains(text, "caravan") || strings.Contains(text, "camel") || strings.Contains(text, "clean-a") ||
		strings.Contains(text, "clean-b")
}
