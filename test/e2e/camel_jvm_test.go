package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
// ready by Camel's health endpoint. Then an integration running that kit's
// image moves to another operator: the same JVM keeps logging, not restarted.
func TestAYAMLRouteRunsOnARealJVM(t *testing.T) {
	g := NewWithT(t)
	ops, apps := env.Namespace(t), env.JVMNamespace(t)
	op := env.InstallOperator(t, "jvm", ops, harness.OperatorOptions{BuildStrategy: build.StrategyPod,
		MavenCache: ptr.To(resource.MustParse("1Gi"))})
	other := env.InstallOperator(t, "jvm-b", ops, harness.OperatorOptions{})
	waitReady(t, op, other)
	waitRegistered(t, op, other)
	cli := adminCLI(t, apps)

	out, errOut, err := cli("run", filepath.Join("testdata", "camel", "timer.yaml"), "--name", "timer", "-x", "jvm",
		"-p", "greeting=Hello from a real JVM")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	key := client.ObjectKey{Namespace: apps, Name: "timer"}
	kit := builtKit(t, key, camelv1.IntegrationKitPhaseReady)

	t.Log("the pod runs on the process node and is ready by Camel's health check; its HTTP route answers")
	pod := jvmPod(t, key)
	g.Eventually(func() (string, error) {
		resp, err := http.Get("http://" + net.JoinHostPort(pod.Status.PodIP, "8080") + "/hello")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, body), err
	}, timeout, poll).Should(Equal("200 Hello from a real JVM over HTTP"))

	t.Log("caravan logs shows the route's lines")
	g.Eventually(integrationLog(cli, "timer"), timeout, poll).Should(And(ContainSubstring("Hello from a real JVM #2"), ContainSubstring("Apache Camel 4.18.0")))
	it, err := getIntegration(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(it.Status.GetCondition(camelv1.ConditionReady).Status).To(BeEquivalentTo("True"))

	t.Log("an integration of the kit's image moves to another operator: the same JVM keeps logging")
	moving := newIntegration(apps, "moving", "jvm", 1)
	moving.Spec.Flows = []camelv1.RawObject{harness.Raw(map[string]any{"from": map[string]any{
		"uri": "timer:tick", "parameters": map[string]any{"period": 500, "includeMetadata": true},
		"steps": []any{
			map[string]any{"setBody": map[string]any{"simple": "moving #${header.CamelTimerCounter}"}},
			map[string]any{"to": "log:moving"}},
	}})}
	moving.Spec.Traits = camelv1.Traits{"container": harness.Raw(map[string]any{"image": kit.Status.Image})}
	create(t, moving)
	movingKey := client.ObjectKeyFromObject(moving)
	before := jvmPod(t, movingKey)
	g.Eventually(func() int { return lastCount(t, cli, "moving") }, timeout, poll).Should(BeNumerically(">=", 3))
	last := lastCount(t, cli, "moving")
	reassign(t, moving, "jvm-b")
	waitRunningUnder(t, movingKey, "jvm-b")
	g.Eventually(func() (int, error) { return lastCount(t, cli, "moving"), nil }, timeout, poll).Should(BeNumerically(">", last+4),
		"no new lines after the move")
	after := jvmPod(t, movingKey)
	g.Expect(after.UID).To(Equal(before.UID), "the move replaced the pod")
	g.Expect(after.Status.ContainerStatuses[0].RestartCount).To(BeZero(), "the move restarted the JVM")

	t.Log("a Java and an XML source run together and read -p file:, --config and --resource")
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "app-config"}, Data: map[string]string{"app.properties": "config.word=from-a-configmap\n"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "data"}, Data: map[string]string{"greeting.txt": "from-a-resource"}},
	} {
		create(t, cm)
	}
	out, errOut, err = cli("run", filepath.Join("testdata", "camel", "Hello.java"), filepath.Join("testdata", "camel", "resource.xml"),
		"--name", "two", "-x", "jvm", "-p", "file:"+filepath.Join("testdata", "camel", "app.properties"),
		"--config", "configmap:app-config", "--resource", "configmap:data")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	jvmPod(t, client.ObjectKey{Namespace: apps, Name: "two"})
	g.Eventually(integrationLog(cli, "two"), timeout, poll).Should(And(ContainSubstring("java says from-a-file and from-a-configmap"),
		ContainSubstring("xml says from-a-resource")))
}

// jvmPod waits for the one pod of an integration to be ready on the process node, and returns it.
func jvmPod(t *testing.T, key client.ObjectKey) corev1.Pod {
	t.Helper()
	var pod corev1.Pod
	NewWithT(t).Eventually(func() error {
		pods := &corev1.PodList{}
		if err := env.Client.List(context.Background(), pods, client.InNamespace(key.Namespace),
			client.MatchingLabels{camelv1.IntegrationLabel: key.Name}); err != nil {
			return err
		}
		if len(pods.Items) != 1 {
			return errorf("%d pods", len(pods.Items))
		}
		pod = pods.Items[0]
		if pod.Spec.NodeName != localcluster.ProcessNodeName {
			return errorf("pod %s on node %q", pod.Name, pod.Spec.NodeName)
		}
		if !podReady(&pod) {
			return errorf("pod %s not ready: %+v", pod.Name, pod.Status.ContainerStatuses)
		}
		return nil
	}, mavenTimeout, poll).Should(Succeed())
	return pod
}

var movingLine = regexp.MustCompile(`moving #(\d+)`)

// integrationLog reads an integration's log with `caravan logs`.
func integrationLog(cli func(...string) (string, string, error), name string) func() (string, error) {
	return func() (string, error) {
		out, errOut, err := cli("logs", name)
		if err != nil {
			return "", errorf("%v: %s", err, errOut)
		}
		return out, nil
	}
}

// lastCount is the highest timer count in the integration's log, 0 for none yet.
func lastCount(t *testing.T, cli func(...string) (string, string, error), name string) int {
	t.Helper()
	out, err := integrationLog(cli, name)()
	if err != nil {
		return 0
	}
	last := 0
	for _, m := range movingLine.FindAllStringSubmatch(out, -1) {
		if n, err := strconv.Atoi(m[1]); err == nil && n > last {
			last = n
		}
	}
	return last
}
