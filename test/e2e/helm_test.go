package e2e

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	. "github.com/onsi/gomega"
	"helm.sh/helm/v3/pkg/action"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/packaging"
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

// TestAnOperatorInstalledFromTheHelmChartRunsIntegrations: the chart,
// installed with Helm's own library, runs an operator pod of the image
// built from this tree that registers and runs an integration; the
// release's uninstall removes the operator and leaves the integration.
func TestAnOperatorInstalledFromTheHelmChartRunsIntegrations(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ops, apps := env.Namespace(t), env.Namespace(t)
	ch, err := packaging.LoadChart(sourceRoot())
	g.Expect(err).NotTo(HaveOccurred())
	cfg := helmConfig(t, ops)
	inst := action.NewInstall(cfg)
	inst.ReleaseName, inst.Namespace = "from-helm", ops
	rel, err := inst.RunWithContext(ctx, ch, map[string]any{
		"operatorId": "from-helm", "image": env.OperatorImage(t), "skipAdmission": true, "skipKamelets": true,
		"registry":          map[string]any{"address": env.Cluster.RegistryAddress, "insecure": true},
		"heartbeatInterval": "2s",
		// Other tests' installs made the shared objects already.
		"sharedResources": false,
	})
	g.Expect(err).NotTo(HaveOccurred())
	uninstalled := false
	t.Cleanup(func() {
		if !uninstalled {
			_, _ = action.NewUninstall(cfg).Run(rel.Name)
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

	t.Log("helm uninstall removes the operator and keeps its integration")
	_, err = action.NewUninstall(cfg).Run(rel.Name)
	g.Expect(err).NotTo(HaveOccurred())
	uninstalled = true
	err = env.Client.Get(ctx, client.ObjectKey{Name: "from-helm"}, &camelv1alpha1.IntegrationOperator{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the registration outlived the release")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(it), it)).To(Succeed())
	g.Eventually(func() []corev1.Pod { return operatorPods(t, ops, "from-helm") }, timeout, poll).Should(BeEmpty())
}
