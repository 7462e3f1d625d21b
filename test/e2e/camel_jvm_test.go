package e2e

import (
	"context"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/test/harness"
)

// TestAYAMLRouteRunsOnARealJVM: `caravan run` of a YAML timer route with a
// property gets a kit built by Maven, and its pod runs camel-main in a JVM on
// the process node: the route's lines are in `caravan logs`, and the pod is
// ready by Camel's health endpoint.
func TestAYAMLRouteRunsOnARealJVM(t *testing.T) {
	g := NewWithT(t)
	ops, apps := env.Namespace(t), env.JVMNamespace(t)
	op := env.InstallOperator(t, "jvm", ops, harness.OperatorOptions{BuildStrategy: build.StrategyPod,
		MavenCache: ptr.To(resource.MustParse("1Gi"))})
	waitReady(t, op)
	waitRegistered(t, op)
	cli := adminCLI(t, apps)

	out, errOut, err := cli("run", filepath.Join("testdata", "camel", "timer.yaml"), "--name", "timer", "-x", "jvm",
		"-p", "greeting=Hello from a real JVM")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	key := client.ObjectKey{Namespace: apps, Name: "timer"}
	builtKit(t, key, camelv1.IntegrationKitPhaseReady)

	t.Log("the pod runs on the process node and is ready by Camel's health check")
	g.Eventually(func() error {
		pods := &corev1.PodList{}
		if err := env.Client.List(context.Background(), pods, client.InNamespace(apps),
			client.MatchingLabels{camelv1.IntegrationLabel: "timer"}); err != nil {
			return err
		}
		if len(pods.Items) != 1 {
			return errorf("%d pods", len(pods.Items))
		}
		p := pods.Items[0]
		if p.Spec.NodeName != localcluster.ProcessNodeName {
			return errorf("pod %s on node %q", p.Name, p.Spec.NodeName)
		}
		if !podReady(&p) {
			return errorf("pod %s not ready: %+v", p.Name, p.Status.ContainerStatuses)
		}
		return nil
	}, mavenTimeout, poll).Should(Succeed())

	t.Log("caravan logs shows the route's lines")
	g.Eventually(func() (string, error) {
		out, errOut, err := cli("logs", "timer")
		if err != nil {
			return "", errorf("%v: %s", err, errOut)
		}
		return out, nil
	}, timeout, poll).Should(And(ContainSubstring("Hello from a real JVM #2"), ContainSubstring("Apache Camel 4.18.0")))
	it, err := getIntegration(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(it.Status.GetCondition(camelv1.ConditionReady).Status).To(BeEquivalentTo("True"))
}
