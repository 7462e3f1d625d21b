package e2e

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/config/kamelets"
	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/cli/clitest"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	kitpkg "github.com/caravan-dev/caravan/internal/kit"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/testca"
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
	// The operators without the catalog come first: they bring the four Kamelets an earlier
	// installer shipped, which the catalog of operator jvm then replaces.
	other := env.InstallOperator(t, "jvm-b", ops, harness.OperatorOptions{})
	onQuarkus := installQuarkusOperator(t, ops)
	// Its kits are layered on the operator's image, which holds no Java: a broken runtime. It has
	// HTTP proxies, which its builder pods' Maven and its integrations get.
	proxy := serveForwardProxy(t)
	proxies := proxyEnv(t, proxy)
	noJava := env.InstallOperator(t, "jvm-nojava", ops, harness.OperatorOptions{BuildStrategy: build.StrategyPod, Env: proxies})
	op := env.InstallOperator(t, "jvm", ops, harness.OperatorOptions{BuildStrategy: build.StrategyPod,
		MavenCache: ptr.To(resource.MustParse("1Gi")), KameletCatalog: true})
	waitReady(t, op, other, noJava, onQuarkus)
	waitRegistered(t, op, other, noJava, onQuarkus)
	patch := fmt.Sprintf(`{"spec":{"build":{"baseImage":%q}}}`, env.OperatorImage(t))
	g.Expect(env.Client.Patch(context.Background(), &camelv1.IntegrationPlatform{ObjectMeta: metav1.ObjectMeta{Namespace: ops, Name: "jvm-nojava"}},
		client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
	cli := adminCLI(t, apps)
	boundedNamespace(t, apps)

	// -Xshare:on: a JVM that cannot use the kit's class-data-sharing archive does not start.
	out, errOut, err := cli("run", filepath.Join("testdata", "camel", "timer.yaml"), "--name", "timer", "-x", "jvm",
		"-p", "greeting=Hello from a real JVM", "-t", "jvm.options=-Xshare:on")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	key := client.ObjectKey{Namespace: apps, Name: "timer"}
	kit := builtKit(t, key, camelv1.IntegrationKitPhaseReady)
	t.Log("the kit image holds a class-data-sharing archive, made by a training start of the base image's JVM in the builder pod; the JVM starts from it")
	archived := kit.Status.GetCondition(kitpkg.ArchiveCondition)
	g.Expect(archived).NotTo(BeNil(), "the kit says nothing of an archive")
	g.Expect(archived.Status).To(BeEquivalentTo("True"), archived.Message)
	g.Expect(archived.Message).To(MatchRegexp(`archive of [1-9]\d{3} classes`))
	t.Logf("kit %s: %s", kit.Name, archived.Message)

	t.Log("the pod runs on the process node and is ready by Camel's health check; its HTTP route answers")
	pod := jvmPod(t, key)
	g.Expect(pod.Spec.Containers[0].Args).To(ContainElements("-Xshare:on", "-XX:SharedArchiveFile=/deployments/kit.jsa"))
	g.Eventually(answersHTTP(pod), timeout, poll).Should(Equal("200 Hello from a real JVM over HTTP"))

	t.Log("as on Camel K, the HTTP route gets a Service and an Ingress, and answers through the Service; the pod has Camel K's requests and limits")
	checkExposedAndBounded(t, key, pod)
	t.Log("as on Camel K, a cron, a quartz and a timer consumer of a minute each run as a CronJob, a Java source's timer too, and a cron consumer of every second as a Deployment;" +
		" they are checked later")
	for _, run := range [][]string{{"cron.yaml", "--name", "cron-timer"}, {"cron-quartz.yaml", "--name", "cron-quartz"},
		{"cron-period.yaml", "--name", "cron-period"}, {"cron-fallback.yaml", "--name", "cron-fallback"}, {"CronJava.java", "--name", "cron-java"}} {
		out, errOut, err = cli(append([]string{"run", filepath.Join("testdata", "camel", run[0]), "-x", "jvm"}, run[1:]...)...)
		g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	}

	startQuarkus(t, cli, ops, apps)

	t.Log("caravan logs shows the route's lines")
	g.Eventually(integrationLog(cli, "timer"), timeout, poll).Should(And(ContainSubstring("Hello from a real JVM #2"), ContainSubstring("Apache Camel 4.18.0")))
	it, err := getIntegration(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(it.Status.GetCondition(camelv1.ConditionReady).Status).To(BeEquivalentTo("True"))

	checkDevMode(t, apps)

	checkACrashingJVM(t, cli, apps)
	checkAJVMOverItsMemoryLimit(t, cli, apps)

	checkInvalidJava(t, cli, apps)

	checkAMoveKeepsTheJVM(t, cli, apps, kit.Status.Image)

	t.Log("as on Camel K, an operator's proxies reach its integrations, unless environment.vars replaces them or environment.http-proxy is off;" +
		" an image is pulled from a registry that asks for credentials with the pull-secret trait's Secret")
	checkProxiesAndPullSecrets(t, cli, apps, "jvm-nojava", kit.Status.Image, proxies)

	t.Log("Camel K's released operator runs beside Caravan's, and its integrations move to jvm-b with their JVMs, and back")
	checkBesideCamelK(t, key, "jvm-b")

	checkTwo(t, cli, apps)

	checkQuarkus(t, cli, apps)
	checkQuarkusDatasource(t, cli, apps)
	checkQuarkusByItsPlatform(t, cli, apps)

	checkCronVariants(t, cli, apps)

	checkAStartupProbeThatNeverPasses(t, cli, apps)

	checkPipeConfigurations(t, cli, apps)
	checkPipeErrorHandler(t, cli, apps)
	checkAStoppedPipe(t, cli, apps)
	checkACrossNamespacePipe(t, cli, apps)
	checkAPipeWithAnImage(t, cli, key)
	checkKameletCatalog(t, cli, ops, apps)

	checkKameletsOfARoute(t, cli, apps)

	checkACanaryRollsBack(t, cli, apps)
	g.Expect(proxy.reached()).To(ContainElement(HaveSuffix(":443")), "the builder pod's Maven did not go through the operator's proxy")

	t.Log("the CronJob's jobs ran the route once each and completed")
	checkCronJobRan(t, cli, client.ObjectKey{Namespace: apps, Name: "cron-timer"})

	t.Log("caravan dump -x jvm archives every object of that operator, its pods' logs, and nothing of the others")
	checkDump(t, cli, apps, "jvm")
}

// checkDevMode checks that caravan run --dev waits for the JVM, follows its log, and deletes the
// integration on Ctrl-C; and that service.node-port=true makes its Service a NodePort.
func checkDevMode(t *testing.T, apps string) {
	t.Helper()
	g := NewWithT(t)
	t.Log("caravan run --dev waits for the JVM, follows its log, and deletes the integration on Ctrl-C")
	dev := startCLI(t, "--kubeconfig", env.Kubeconfig(t, "admin", "system:masters"), "-n", apps, "run",
		filepath.Join("testdata", "camel", "timer.yaml"), "--name", "dev", "-x", "jvm", "-p", "greeting=Hello from --dev", "--dev",
		"-t", "service.enabled=true", "-t", "service.node-port=true")
	g.Eventually(dev.stdout, mavenTimeout, poll).Should(And(ContainSubstring("integration dev: Running"),
		ContainSubstring("Hello from --dev #2")), dev.stderr)
	t.Log("as on Camel K, service.node-port=true makes the Service a NodePort")
	g.Expect(serviceType(client.ObjectKey{Namespace: apps, Name: "dev"})()).To(Equal(corev1.ServiceTypeNodePort))
	dev.stop()
	g.Expect(dev.stdout()).To(HaveSuffix("integration \"dev\" deleted\n"))
	g.Eventually(func() bool {
		_, err := getIntegration(client.ObjectKey{Namespace: apps, Name: "dev"})
		return apierrors.IsNotFound(err)
	}, timeout, poll).Should(BeTrue(), "--dev left its integration behind")
}

// checkAMoveKeepsTheJVM checks that an integration of image, a kit's, moves to another operator
// with its JVM, which keeps logging, and that it scales to 0 and back through its scale subresource.
func checkAMoveKeepsTheJVM(t *testing.T, cli func(...string) (string, string, error), apps, image string) {
	t.Helper()
	g := NewWithT(t)
	t.Log("an integration of the kit's image moves to another operator: the same JVM keeps logging")
	moving := newIntegration(apps, "moving", "jvm", 1)
	moving.Spec.Flows = []camelv1.RawObject{harness.Raw(map[string]any{"from": map[string]any{
		"uri": "timer:tick", "parameters": map[string]any{"period": 500, "includeMetadata": true},
		"steps": []any{
			map[string]any{"setBody": map[string]any{"simple": "moving #${header.CamelTimerCounter}"}},
			map[string]any{"to": "log:moving"}},
	}})}
	moving.Spec.Traits = camelv1.Traits{"container": harness.Raw(map[string]any{"image": image})}
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
	t.Log("as on Camel K, the integration of an image Caravan did not build scales to 0 and back through its scale subresource")
	scaleTo(t, moving, 0)
	g.Eventually(replicasOf(movingKey), timeout, poll).Should(HaveValue(BeEquivalentTo(0)))
	g.Eventually(podsOf(movingKey), timeout, poll).Should(BeEmpty())
	scaleTo(t, moving, 1)
	g.Eventually(replicasOf(movingKey), timeout, poll).Should(HaveValue(BeEquivalentTo(1)))
	g.Expect(jvmPod(t, movingKey).UID).NotTo(Equal(before.UID))
	g.Eventually(integrationLog(cli, "moving"), timeout, poll).Should(ContainSubstring("moving #3"))
}

// checkKameletsOfARoute checks Camel K's Kamelet configuration cases on a plain integration,
// kamelets, whose route uses Kamelets of the catalog; its ConfigMap is created after it.
func checkKameletsOfARoute(t *testing.T, cli func(...string) (string, string, error), apps string) {
	t.Helper()
	g := NewWithT(t)
	t.Log("a plain integration whose route uses Kamelets of the catalog gets them mounted, and their jars in its kit; a percent-encoded option reaches the Kamelet decoded;" +
		" as in Camel K's Kamelet config cases, a Kamelet's default configuration comes from -p, a named one from a mounted ConfigMap, a parameter's placeholder from a mounted Secret;" +
		" the ConfigMap is created after the integration, which waits for it; without mount.hot-reload its change does not reach the JVM")
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "kamelet-secret"},
		StringData: map[string]string{"kamelet.word": "Hello from a Secret's placeholder"}})
	out, errOut, err := cli("run", filepath.Join("testdata", "camel", "kamelets.yaml"), "--name", "kamelets", "-x", "jvm",
		"-p", "camel.kamelet.timer-source.message=Hello from a default configuration",
		"-t", "mount.configs=configmap:kamelet-named", "-t", "mount.configs=secret:kamelet-secret")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	checkALateConfigMap(t, cli, client.ObjectKey{Namespace: apps, Name: "kamelets"})
	g.Eventually(integrationLog(cli, "kamelets"), timeout, poll).Should(And(ContainSubstring("Hello from a Kamelet, decoded"),
		ContainSubstring("Hello from a default configuration"), ContainSubstring("Hello from a named configuration"),
		ContainSubstring("Hello from a Secret's placeholder")))
	checkHotReloadOff(t, cli, client.ObjectKey{Namespace: apps, Name: "kamelets"})
}

// checkACanaryRollsBack checks that a canary of timer and two to jvm-nojava, whose runtime cannot
// start, fails its first wave on readiness, moves it back with its JVM, and moves no more.
func checkACanaryRollsBack(t *testing.T, cli func(...string) (string, string, error), apps string) {
	t.Helper()
	g := NewWithT(t)
	t.Log("a canary to an operator whose runtime cannot start fails its first wave on readiness, rolls it back, and moves no more")
	running := map[string]types.UID{}
	for _, name := range []string{"timer", "two"} {
		running[name] = jvmPod(t, client.ObjectKey{Namespace: apps, Name: name}).UID
		g.Expect(env.Client.Patch(context.Background(), &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: name}},
			client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"wave":"jvm"}}}`)))).To(Succeed())
	}
	out, errOut, err := cli("reassign", "--from", "jvm", "--to", "jvm-nojava", "-l", "wave=jvm", "--waves", "1,2",
		"--wave-timeout", "5m", "--rollback-on-failure")
	g.Expect(err).To(HaveOccurred(), out)
	t.Logf("the canary said:\n%s%s", out, errOut)
	g.Expect(out).To(ContainSubstring("wave 1/2: moving 1 to jvm-nojava (1 of 2)"))
	g.Expect(out).To(ContainSubstring("wave 1/2 failed; moving its 1 back to jvm"))
	g.Expect(out).NotTo(ContainSubstring("wave 2/2: moving"))
	g.Expect(errOut).To(And(ContainSubstring("in phase Error under jvm-nojava"), ContainSubstring(`"java": executable file not found in $PATH`)))
	t.Log("jvm-nojava's base image has no java: its builder pod could not train the kit's archive, the next attempt built the kit without one, and the kit says why")
	kits := &camelv1.IntegrationKitList{}
	g.Expect(env.Client.List(context.Background(), kits, client.InNamespace(apps), client.MatchingLabels{camelv1.OperatorIDLabel: "jvm-nojava"})).To(Succeed())
	g.Expect(kits.Items).To(ContainElement(HaveField("Status.Conditions", ContainElement(And(HaveField("Type", kitpkg.ArchiveCondition),
		HaveField("Status", metav1.ConditionFalse), HaveField("Message", ContainSubstring("could not run the training start")))))))
	g.Expect(errOut).To(ContainSubstring("the 1 of this wave are back on jvm"))
	for _, name := range []string{"timer", "two"} {
		key := client.ObjectKey{Namespace: apps, Name: name}
		waitRunningUnder(t, key, "jvm")
		back := jvmPod(t, key)
		g.Expect(back.UID).To(Equal(running[name]), "the JVM of %s that ran before the canary was replaced", name)
		g.Expect(back.Status.ContainerStatuses[0].RestartCount).To(BeZero())
	}
}

// checkTwo checks Camel K's configuration cases on one integration, two, of a Java, an XML and a
// YAML source: properties of files, ConfigMaps and Secrets, resources, kamel's precedence, the
// container, jvm, service, health and prometheus traits, a base truststore and CA certificates,
// and hot reload of a labelled ConfigMap.
func checkTwo(t *testing.T, cli func(...string) (string, string, error), apps string) {
	t.Helper()
	g := NewWithT(t)
	t.Log("a Java, an XML and a YAML source run together and read -p file:, -p configmap:, --config configmap: and secret:, and --resource")
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "app-config", Labels: map[string]string{camelv1.IntegrationLabel: "two"}},
			Data: map[string]string{"app.properties": "config.word=from-a-configmap\nconfig.echo=echo {{config.word}}\n"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "data"}, Data: map[string]string{"greeting.txt": "from-a-resource"},
			BinaryData: map[string][]byte{"greeting.jar": jarOf(t, "jar-greeting.txt", "from a jar on the classpath")}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "more-props"}, Data: map[string]string{"cm.word": "from-a-configmap-entry"}},
	} {
		create(t, cm)
	}
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "app-secret"},
		StringData: map[string]string{"secret.properties": "secret.word=from-a-secret\n"}})
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "db"}, StringData: map[string]string{"password": "s3cret"}})
	createResourceCases(t, apps)
	baseTLSAddress := serveWithABaseTruststore(t, apps)
	tlsAddress := serveWithPrivateCA(t, apps)
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "private-ca-2"}, Data: map[string][]byte{"ca.crt": testca.New(t, env.Cluster.HostAddress()).PEM}})
	t.Log("as in kamel, -p KEY=VALUE wins over the key of a -p file:, -e takes a Secret's key, and the container trait's limits size the heap;" +
		" as on Camel K, the REST DSL gets a Service of service.type, jvm.classpath adds a jar, jvm.ca-certificates are trusted")
	out, errOut, err := cli("run", filepath.Join("testdata", "camel", "Hello.java"), filepath.Join("testdata", "camel", "resource.xml"),
		filepath.Join("testdata", "camel", "echo.yaml"), "--name", "two", "-x", "jvm", "-p", "precedence.word=from-the-command-line",
		"-t", "jvm.classpath=/etc/camel/resources.d/_configmaps/data/greeting.jar", "-t", "service.type=NodePort", "-t", "mount.hot-reload=true",
		"-t", "mount.configs=secret:private-ca", "-t", "mount.configs=secret:truststore-pw", "-p", "tls.address="+tlsAddress,
		"-t", "jvm.ca-certificates[0].cert-path=/etc/camel/conf.d/_secrets/private-ca/ca.crt",
		"-t", "mount.configs=secret:private-ca-2", "-t", "jvm.ca-certificates[1].cert-path=/etc/camel/conf.d/_secrets/private-ca-2/ca.crt",
		"-t", "jvm.truststore-password-path=/etc/camel/conf.d/_secrets/truststore-pw/password",
		"-p", "file:"+filepath.Join("testdata", "camel", "app.properties"),
		"--config", "configmap:app-config", "--resource", "configmap:data", "-p", "configmap:more-props", "--config", "secret:app-secret",
		"-e", "DB_PASSWORD=secret:db/password", "-t", "container.request-cpu=0.005", "-t", "container.limit-memory=600Mi",
		"-t", "prometheus.enabled=true", "-t", "prometheus.pod-monitor=false",
		"-t", "health.startup-probe-enabled=true", "-t", "health.liveness-probe-enabled=true",
		"-p", "camel.server.port=8085", "-t", "container.ports=hello;8085", "-t", "service.ports=hello;85;8085",
		"-t", "container.name=my-container-name", "-t", "container.image-pull-policy=Always",
		filepath.Join("testdata", "camel", "files.yaml"), "-p", "secret:prop-secret", "--resource", "configmap:res-dir@/tmp/app",
		"--resource", "configmap:res-multi/second@/tmp/key/test.txt", "--resource", "secret:res-secret", "--config", "secret:multi-sec/two.word",
		"-t", "mount.resources=configmap:deps/deprecated.jar@/etc/camel/resources", "-t", "mount.resources=configmap:deps/specific.jar@/etc/other/resources",
		filepath.Join("testdata", "camel", "truststore.yaml"), "-p", "tls.base-address="+baseTLSAddress, "-t", "mount.configs=secret:base-ts",
		"-t", "jvm.base-truststore.truststore-path=/etc/camel/conf.d/_secrets/base-ts/base.p12",
		"-t", "jvm.base-truststore.password-path=/etc/camel/conf.d/_secrets/base-ts/password")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	twoPod := jvmPod(t, client.ObjectKey{Namespace: apps, Name: "two"})
	g.Eventually(func() (string, error) {
		it, err := getIntegration(client.ObjectKey{Namespace: apps, Name: "two"})
		if err != nil || it.Status.GetCondition(camelv1.ConditionReady) == nil {
			return "", err
		}
		return it.Status.GetCondition(camelv1.ConditionReady).Reason, nil
	}, timeout, poll).Should(Equal("DeploymentReady"), "as on Camel K, a ready integration whose startup probe passed is DeploymentReady")
	g.Expect(twoPod.Spec.InitContainers).To(HaveExactElements(HaveField("Name", "truststore-0"), HaveField("Name", "truststore-1"), HaveField("Name", "truststore-2")),
		"as on Camel K, the base truststore is copied and each CA certificate imported into the truststore before the JVM starts")
	g.Expect(twoPod.Spec.Containers).To(ConsistOf(And(HaveField("Name", "my-container-name"), HaveField("ImagePullPolicy", corev1.PullAlways),
		HaveField("Ports", ContainElement(And(HaveField("Name", "hello"), HaveField("ContainerPort", int32(8085))))))))
	g.Expect(twoPod.Spec.Containers[0].StartupProbe).NotTo(BeNil())
	g.Expect(twoPod.Status.ContainerStatuses[0].Started).To(HaveValue(BeTrue()), "ready before its startup probe passed")
	g.Expect(twoPod.Spec.Containers[0].Resources).To(Equal(corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("600Mi")}}))
	g.Expect(twoPod.Spec.Containers[0].Args).To(ContainElement("-Xmx315M"), "the heap is not half the memory limit")
	g.Eventually(integrationLog(cli, "two"), timeout, poll).Should(And(ContainSubstring("java says from-a-file and from-a-configmap and from-a-configmap-entry and from-a-secret, echo from-a-configmap"),
		ContainSubstring("classpath says from-a-configmap-entry"),
		ContainSubstring("xml says from-a-resource"),
		ContainSubstring("yaml says from-a-file and from-the-command-line in "+apps+" as two-"), ContainSubstring("with s3cret")))
	g.Eventually(integrationLog(cli, "two"), timeout, poll).Should(ContainSubstring("tls says trusted by a private CA"),
		"the JVM does not trust the CA of jvm.ca-certificates")
	t.Log("jvm.classpath puts a jar before the kit's: the JVM starts without the kit's archive and says so")
	g.Expect(integrationLog(cli, "two")()).To(ContainSubstring("Unable to use shared archive"))
	checkResourceCases(t, cli)
	checkRESTOnTheClasspath(t, client.ObjectKey{Namespace: apps, Name: "two"})
	checkNeverReady(t, cli, apps)

	t.Log("as on Camel K, the prometheus trait has the runtime serve its exchange counters on the management port")
	g.Expect(twoPod.Annotations).To(HaveKeyWithValue("prometheus.io/path", "/observe/metrics"))
	g.Eventually(httpBody("http://"+net.JoinHostPort(twoPod.Status.PodIP, twoPod.Annotations["prometheus.io/port"])+"/observe/metrics"), timeout, poll).Should(MatchRegexp(`(?m)^camel_exchanges_total\{.*\} [1-9]`))
	t.Log("as on Camel K, with mount.hot-reload a change of a labelled ConfigMap restarts the integration with its new value")
	appConfig := &corev1.ConfigMap{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: apps, Name: "app-config"}, appConfig)).To(Succeed())
	appConfig.Data["app.properties"] = "config.word=from-a-changed-configmap\nconfig.echo=echo {{config.word}}\n"
	g.Expect(env.Client.Update(context.Background(), appConfig)).To(Succeed())
	g.Eventually(integrationLog(cli, "two"), mavenTimeout, poll).Should(ContainSubstring("java says from-a-file and from-a-changed-configmap"))
}

// checkAJVMOverItsMemoryLimit checks that a JVM that uses more memory than its container's limit
// is killed by the kernel, and that the integration says so. Only a kubelet enforces the limit.
func checkAJVMOverItsMemoryLimit(t *testing.T, cli func(...string) (string, string, error), apps string) {
	t.Helper()
	if env.Cluster.Node != localcluster.NodeKubelet {
		t.Log("the process node enforces no memory limit (docs/local-cluster.md): no JVM over its limit on it")
		return
	}
	g := NewWithT(t)
	t.Log("a JVM whose heap is larger than its container's memory limit is killed by the kernel: the integration is in Error, OutOfMemory, with the limit")
	out, errOut, err := cli("run", filepath.Join("testdata", "camel", "timer.yaml"), "--name", "hungry", "-x", "jvm", "-p", "greeting=Hungry",
		"-t", "container.limitMemory=128Mi", "-t", "jvm.options=-Xms256m", "-t", "jvm.options=-Xmx256m", "-t", "jvm.options=-XX:+AlwaysPreTouch")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	key := client.ObjectKey{Namespace: apps, Name: "hungry"}
	g.Eventually(phaseAndReady(key), mavenTimeout, poll).Should(And(HavePrefix("Error OutOfMemory pod hungry-"),
		ContainSubstring("was killed for using more memory than its limit of 128Mi (OOMKilled)"), ContainSubstring("-t container.limitMemory=")))
	out, errOut, err = cli("delete", "hungry")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
}

// checkACrashingJVM checks that a route with an unknown component crashes its JVM, putting the
// integration in Error with Camel's exception, which describe shows and caravan logs reads.
func checkACrashingJVM(t *testing.T, cli func(...string) (string, string, error), apps string) {
	t.Helper()
	g := NewWithT(t)
	t.Log("a route with an unknown component crashes its JVM: the integration is in Error with Camel's exception, which describe shows")
	broken := newIntegration(apps, "broken", "jvm", 1)
	delete(broken.Spec.Traits, "container") // built into a kit, not the fixture's image
	broken.Spec.Flows = []camelv1.RawObject{harness.Raw(map[string]any{"from": map[string]any{
		"uri": "timer:crash", "steps": []any{map[string]any{"to": "nosuch:thing"}}}})}
	follow := startCLI(t, "--kubeconfig", env.Kubeconfig(t, "admin", "system:masters"), "-n", apps, "log", "broken") // kamel's name, which follows
	g.Eventually(follow.stderr, timeout, poll).Should(ContainSubstring("waiting for a pod of integration broken"))
	create(t, broken)
	brokenKey := client.ObjectKeyFromObject(broken)
	g.Eventually(phaseAndReady(brokenKey), mavenTimeout, poll).Should(And(HavePrefix("Error Crashing pod broken-"), ContainSubstring("exited with code 1"),
		ContainSubstring("No endpoint could be found for: nosuch://thing")), func() string {
		pods := &corev1.PodList{}
		_ = env.Client.List(context.Background(), pods, client.InNamespace(apps), client.MatchingLabels{camelv1.IntegrationLabel: "broken"})
		log, _ := integrationLog(cli, "broken")()
		return fmt.Sprintf("pods: %+v\nlog: %s", pods.Items, log)
	})
	out, errOut, err := cli("describe", "integration", "broken")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	g.Expect(out).To(ContainSubstring("No endpoint could be found for: nosuch://thing"))
	t.Log("caravan logs --previous prints the run before the restart; --timestamps dates each line, --since and --tail bound them")
	g.Eventually(func() (string, error) {
		out, errOut, err := cli("logs", "broken", "--previous", "--timestamps", "--since", "1h", "--tail", "3")
		if err != nil {
			return "", errorf("%v: %s", err, errOut)
		}
		return out, nil
	}, timeout, poll).Should(MatchRegexp(`\A(\d{4}-\d\d-\d\dT\S+Z .*\n){1,3}\z`))
	out, errOut, err = cli("logs", "broken", "--since", "1s", "--timestamps")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		at, perr := time.Parse(time.RFC3339Nano, strings.Fields(line)[0])
		g.Expect(perr).NotTo(HaveOccurred(), line)
		g.Expect(time.Since(at)).To(BeNumerically("<", 30*time.Second), "--since 1s served an older line: %s", line)
	}
	t.Log("caravan log, started before the pod, follows each run of the crashing JVM")
	g.Eventually(func() int { return strings.Count(follow.stdout(), "No endpoint could be found for: nosuch://thing") }, 2*timeout, poll).Should(
		BeNumerically(">=", 4), func() string { return follow.stdout() + follow.stderr() }) // each run logs it twice: the exception, its cause
	g.Expect(follow.stderr()).To(ContainSubstring("waiting for a pod of integration broken"))
	g.Expect(follow.stderr()).To(MatchRegexp(`pod broken-\S+: container integration restarted \(restart [1-9]\)`))
	follow.stop()
	g.Expect(env.Client.Delete(context.Background(), broken)).To(Succeed()) // its restarts cost CPU
}

// checkInvalidJava checks, as Camel K's invalid-java case does, that a Java route that does not
// compile ends the integration in Error, with the compiler's message.
func checkInvalidJava(t *testing.T, cli func(...string) (string, string, error), apps string) {
	t.Helper()
	g := NewWithT(t)
	t.Log("as on Camel K, a Java route that does not compile ends the integration in Error, with the compiler's message")
	out, errOut, err := cli("run", filepath.Join("testdata", "camel", "Invalid.java"), "--name", "invalid-java", "-x", "jvm")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	g.Eventually(phaseAndReady(client.ObjectKey{Namespace: apps, Name: "invalid-java"}), mavenTimeout, poll).Should(
		And(MatchRegexp(`^Error \S+ pod invalid-java-`), MatchRegexp(`(?i)compil`)))
	g.Expect(env.Client.Delete(context.Background(), &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "invalid-java"}})).To(Succeed())
}

// checkNeverReady checks, as Camel K's health cases do, that a readiness check that is never up
// and a stopped route make the integration RuntimeNotReady, naming them, while its startup probe
// passes; and that service.type=LoadBalancer gives a LoadBalancer Service.
func checkNeverReady(t *testing.T, cli func(...string) (string, string, error), apps string) {
	t.Helper()
	g := NewWithT(t)
	t.Log("as on Camel K, a readiness check that is never up, and a stopped route, make the integration RuntimeNotReady, naming them," +
		" its startup probe passing; service.enabled and service.type=LoadBalancer give a LoadBalancer Service")
	out, errOut, err := cli("run", filepath.Join("testdata", "camel", "NeverReady.java"), "--name", "never-ready", "-x", "jvm",
		"-t", "service.enabled=true", "-t", "service.type=LoadBalancer", "-t", "health.startup-probe-enabled=true")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	g.Eventually(serviceType(client.ObjectKey{Namespace: apps, Name: "never-ready"}), mavenTimeout, poll).Should(Equal(corev1.ServiceTypeLoadBalancer))
	g.Eventually(phaseAndReady(client.ObjectKey{Namespace: apps, Name: "never-ready"}), mavenTimeout, poll).Should(And(HavePrefix("Error RuntimeNotReady 1/1 pods are not ready"), ContainSubstring("never-ready DOWN"),
		ContainSubstring("route:stopped (Route stopped has status Stopped) DOWN")))
	g.Eventually(func() (string, error) {
		pods := &corev1.PodList{}
		err := env.Client.List(context.Background(), pods, client.InNamespace(apps), client.MatchingLabels{camelv1.IntegrationLabel: "never-ready"})
		if err != nil || len(pods.Items) != 1 || len(pods.Items[0].Status.ContainerStatuses) == 0 {
			return "", err
		}
		cs := pods.Items[0].Status.ContainerStatuses[0]
		return fmt.Sprintf("started %v, restarts %d", ptr.Deref(cs.Started, false), cs.RestartCount), nil
	}, timeout, poll).Should(Equal("started true, restarts 0"), "as on Camel K, a readiness check that fails does not fail the startup probe")
	t.Log("as in Camel K's case of a stopped route on three replicas, each pod that is not ready is counted")
	it, err := getIntegration(client.ObjectKey{Namespace: apps, Name: "never-ready"})
	g.Expect(err).NotTo(HaveOccurred())
	scaleTo(t, it, 3)
	g.Eventually(phaseAndReady(client.ObjectKey{Namespace: apps, Name: "never-ready"}), mavenTimeout, poll).Should(And(
		HavePrefix("Error RuntimeNotReady 3/3 pods are not ready"), ContainSubstring("route:stopped (Route stopped has status Stopped) DOWN")))
	g.Expect(env.Client.Delete(context.Background(), &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "never-ready"}})).To(Succeed())
}

// checkCronVariants checks, as Camel K's cron cases do, that the quartz and timer CronJobs' jobs
// ran their routes and that the cron consumer of every second runs in a Deployment; then deletes them.
func checkCronVariants(t *testing.T, cli func(...string) (string, string, error), apps string) {
	t.Helper()
	g := NewWithT(t)
	t.Log("the quartz, timer and Java CronJobs' jobs ran their routes, and the cron consumer of every second runs in a Deployment")
	for _, name := range []string{"cron-quartz", "cron-period", "cron-java"} {
		checkCronJobRan(t, cli, client.ObjectKey{Namespace: apps, Name: name})
	}
	checkCronFallback(t, cli, client.ObjectKey{Namespace: apps, Name: "cron-fallback"})
	for _, name := range []string{"cron-quartz", "cron-period", "cron-java", "cron-fallback"} {
		g.Expect(env.Client.Delete(context.Background(), &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: name}})).To(Succeed())
	}
}

// checkAStartupProbeThatNeverPasses checks that a startup probe that never passes kills the JVM,
// which the integration's Error and an Unhealthy event tell.
func checkAStartupProbeThatNeverPasses(t *testing.T, cli func(...string) (string, string, error), apps string) {
	t.Helper()
	g := NewWithT(t)
	t.Log("a startup probe that never passes kills the JVM, which the integration's Error tells")
	out, errOut, err := cli("run", filepath.Join("testdata", "camel", "timer.yaml"), "--name", "nostart", "-x", "jvm", "-p", "greeting=hi",
		"-t", "health.startup-probe-enabled=true", "-t", "health.startup-probe=/nope", "-t", "health.startup-period=1", "-t", "health.startup-failure-threshold=2")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	nostart := client.ObjectKey{Namespace: apps, Name: "nostart"}
	g.Eventually(phaseAndReady(nostart), mavenTimeout, poll).Should(And(MatchRegexp(`^Error \S+ pod nostart-`), MatchRegexp("exited with code (143|137)")),
		"a failed startup probe stops the JVM as a kubelet does: SIGTERM, SIGKILL after the grace period")
	g.Expect(eventNotes(apps, "", "Unhealthy", corev1.EventTypeWarning)).To(ContainElement(HavePrefix("Startup probe failed")))
	g.Expect(eventNotes(apps, "", "Killing", corev1.EventTypeNormal)).To(ContainElement(
		"Container integration failed startup probe, will be restarted"), "as a kubelet says it")
	g.Expect(env.Client.Delete(context.Background(), &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "nostart"}})).To(Succeed())
}

// checkCronJobRan checks that the integration runs as a CronJob of a minute, without a Deployment,
// and that a job of it completed, its pod having logged the route's message.
func checkCronJobRan(t *testing.T, cli func(...string) (string, string, error), key client.ObjectKey) {
	t.Helper()
	g := NewWithT(t)
	cs, err := kubernetes.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	cj, err := cs.BatchV1().CronJobs(key.Namespace).Get(context.Background(), key.Name, metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred(), "no CronJob for a consumer of a minute")
	g.Expect(cj.Spec.Schedule).To(BeElementOf("* * * * *", "*/1 * * * *"), "a schedule of every minute, as written")
	_, err = cs.AppsV1().Deployments(key.Namespace).Get(context.Background(), key.Name, metav1.GetOptions{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "a Deployment runs beside the CronJob")
	g.Eventually(func() (int32, error) {
		jobs, err := cs.BatchV1().Jobs(key.Namespace).List(context.Background(), metav1.ListOptions{})
		var done int32
		for _, j := range jobs.Items {
			if owner := metav1.GetControllerOf(&j); owner != nil && owner.Name == key.Name {
				done += j.Status.Succeeded
			}
		}
		return done, err
	}, mavenTimeout, poll).Should(BeNumerically(">=", 1), "no job of the CronJob %s completed", key.Name)
	g.Eventually(integrationLog(cli, key.Name), timeout, poll).Should(ContainSubstring("Magicstring!"))
	it, err := getIntegration(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(it.Status.Phase).To(Equal(camelv1.IntegrationPhaseRunning))
	g.Expect(it.Status.GetCondition(camelv1.ConditionReady).Reason).To(BeElementOf("LastJobSucceeded", "CronJobActive"))
	g.Expect(it.Status.GetCondition(camelv1.ConditionCronJobAvailable)).To(HaveField("Status", BeEquivalentTo("True")))
}

// checkCronFallback checks, as Camel K's cron-fallback case does, that the integration's cron:
// consumer runs in a Deployment, with no CronJob and CronJobAvailable false, and logs.
func checkCronFallback(t *testing.T, cli func(...string) (string, string, error), key client.ObjectKey) {
	t.Helper()
	g := NewWithT(t)
	jvmPod(t, key)
	g.Expect(apierrors.IsNotFound(env.Client.Get(context.Background(), key, &batchv1.CronJob{}))).To(BeTrue(), "a CronJob despite cron.fallback")
	g.Eventually(func() (string, error) {
		it, err := getIntegration(key)
		if err != nil {
			return "", err
		}
		ready, cron := it.Status.GetCondition(camelv1.ConditionReady), it.Status.GetCondition(camelv1.ConditionCronJobAvailable)
		if ready == nil || cron == nil {
			return "", nil
		}
		return fmt.Sprintf("Ready %s, CronJobAvailable %s %s", ready.Status, cron.Status, cron.Reason), nil
	}, timeout, poll).Should(Equal("Ready True, CronJobAvailable False CronJobNotAvailableReason"))
	g.Eventually(integrationLog(cli, key.Name), 2*timeout, poll).Should(ContainSubstring("Magicstring!"))
}

// checkDump runs caravan dump -x id in namespace ns and checks that the archive names every
// integration, pipe, kit and build of operator id there, with its Deployments and pods, and the
// operator's pods with their logs, and none of another operator's.
func checkDump(t *testing.T, cli func(...string) (string, string, error), ns, id string) {
	t.Helper()
	g := NewWithT(t)
	file := filepath.Join(t.TempDir(), "dump.tar.gz")
	out, errOut, err := cli("dump", "-x", id, "-o", file)
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	files := clitest.ReadArchive(t, file)
	index := files["index.txt"]
	t.Logf("the archive holds:\n%s", index)
	for kind, list := range map[string]client.ObjectList{"integrations": &camelv1.IntegrationList{}, "pipes": &camelv1.PipeList{},
		"integrationkits": &camelv1.IntegrationKitList{}, "builds": &camelv1.BuildList{}} {
		g.Expect(env.Client.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
		items, err := cmdutil.ListItems(list)
		g.Expect(err).NotTo(HaveOccurred())
		dumped := files["namespaces/"+ns+"/"+kind+".yaml"]
		for _, obj := range items {
			if obj.GetAnnotations()[camelv1.OperatorIDAnnotation] != id {
				// A kit or build of another operator may be named in the status of one of id's.
				if kind == "integrations" || kind == "pipes" {
					g.Expect(dumped).NotTo(ContainSubstring("name: "+obj.GetName()+"\n"), "%s of another operator is dumped", obj.GetName())
				}
				continue
			}
			g.Expect(dumped).To(ContainSubstring("name: "+obj.GetName()+"\n"), "%s %s is not in the archive", kind, obj.GetName())
			if kind == "integrations" {
				pods := &corev1.PodList{}
				g.Expect(env.Client.List(context.Background(), pods, client.InNamespace(ns),
					client.MatchingLabels{camelv1.IntegrationLabel: obj.GetName()})).To(Succeed())
				for _, p := range pods.Items {
					g.Expect(files["namespaces/"+ns+"/integrations/"+obj.GetName()+"/pods.yaml"]).To(ContainSubstring("name: " + p.Name + "\n"))
				}
			}
		}
	}
	g.Expect(files["cluster/integrationoperators.yaml"]).To(ContainSubstring("name: " + id + "\n"))
	var logs []string
	for name, content := range files {
		if strings.HasPrefix(name, "operator/logs/") {
			g.Expect(content).NotTo(BeEmpty(), "%s is empty", name)
			logs = append(logs, name)
		}
	}
	g.Expect(logs).NotTo(BeEmpty(), "the archive holds no log of operator %s's pods", id)
	g.Expect(files["operator/pods.yaml"]).To(ContainSubstring("name: " + id + "-operator-"))
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
		if pod.Spec.NodeName != env.Cluster.PodNodeName() {
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
	last := 0
	for _, n := range counts(t, cli, name, movingLine) {
		last = max(last, n)
	}
	return last
}

// backgroundCLI is a caravan command that runs until stopped, its output read as it comes.
type backgroundCLI struct {
	cmd      *exec.Cmd
	mu       sync.Mutex
	out, err bytes.Buffer
}

// startCLI starts caravan with args; the test's end stops it.
func startCLI(t *testing.T, args ...string) *backgroundCLI {
	t.Helper()
	b := &backgroundCLI{cmd: exec.Command(env.Caravan, args...)}
	b.cmd.Stdout, b.cmd.Stderr = lockedWriter{&b.mu, &b.out}, lockedWriter{&b.mu, &b.err}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.stop)
	return b
}

func (b *backgroundCLI) stdout() string { b.mu.Lock(); defer b.mu.Unlock(); return b.out.String() }
func (b *backgroundCLI) stderr() string { b.mu.Lock(); defer b.mu.Unlock(); return b.err.String() }

// stop interrupts the command and waits for it; stopping twice is harmless.
func (b *backgroundCLI) stop() {
	if b.cmd.ProcessState != nil {
		return
	}
	_ = b.cmd.Process.Signal(os.Interrupt)
	_ = b.cmd.Wait()
}

// lockedWriter writes to w under mu.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// boundedNamespace gives ns a ResourceQuota that demands requests and limits of every pod, as
// platform teams set, and waits until the quota controller has counted it, when it admits pods.
func boundedNamespace(t *testing.T, ns string) {
	t.Helper()
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bounded"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			corev1.ResourceLimitsCPU: resource.MustParse("32"), corev1.ResourceLimitsMemory: resource.MustParse("32Gi"),
			corev1.ResourceRequestsCPU: resource.MustParse("16"), corev1.ResourceRequestsMemory: resource.MustParse("16Gi")}}}
	create(t, quota)
	NewWithT(t).Eventually(func() (corev1.ResourceList, error) {
		err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(quota), quota)
		return quota.Status.Hard, err
	}, timeout, poll).ShouldNot(BeEmpty(), "the quota controller never counted the quota")
}

// checkExposedAndBounded checks that an integration whose route serves HTTP at /hello got, as on
// Camel K, a Service that the route answers through (at its cluster address, which the process
// node serves as kube-proxy does), an Ingress to it, and Camel K's default requests and limits,
// with the heap half the limit.
func checkExposedAndBounded(t *testing.T, key client.ObjectKey, pod corev1.Pod) {
	t.Helper()
	g := NewWithT(t)
	cs, err := kubernetes.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	svc, err := cs.CoreV1().Services(key.Namespace).Get(context.Background(), key.Name, metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred(), "no Service for a route that serves HTTP")
	g.Expect(svc.Spec.Ports).To(ConsistOf(And(HaveField("Name", "http"), HaveField("Port", int32(80)))))
	g.Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeClusterIP))
	g.Eventually(httpBody("http://"+net.JoinHostPort(svc.Spec.ClusterIP, "80")+"/hello"), timeout, poll).Should(Equal("Hello from a real JVM over HTTP"), "the route does not answer at the Service's address")
	ing, err := cs.NetworkingV1().Ingresses(key.Namespace).Get(context.Background(), key.Name, metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred(), "no Ingress for the Service, as Camel K makes on Kubernetes")
	g.Expect(ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name).To(Equal(key.Name))
	main := pod.Spec.Containers[0]
	g.Expect(main.Resources).To(Equal(corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("125m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")}}))
	g.Expect(main.Args).To(ContainElement("-Xmx268M"))
}

// scaleTo sets the replicas of an integration or a binding through its scale subresource, as kubectl scale does.
func scaleTo(t *testing.T, obj client.Object, replicas int32) {
	t.Helper()
	scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
	NewWithT(t).Expect(env.Client.SubResource("scale").Update(context.Background(), obj, client.WithSubResourceBody(scale))).To(Succeed())
}

// podsOf lists the pods of the integration of key.
func podsOf(key client.ObjectKey) func() ([]corev1.Pod, error) {
	return func() ([]corev1.Pod, error) {
		pods := &corev1.PodList{}
		err := env.Client.List(context.Background(), pods, client.InNamespace(key.Namespace), client.MatchingLabels{camelv1.IntegrationLabel: key.Name})
		return pods.Items, err
	}
}

// jarOf is a jar holding one file.
func jarOf(t *testing.T, name, content string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	f, err := w.Create(name)
	if err == nil {
		_, err = f.Write([]byte(content))
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// serveWithPrivateCA serves "trusted by a private CA" over HTTPS on the host, with a
// certificate of a CA of its own, and puts that CA and a truststore password in the Secrets
// private-ca and truststore-pw of ns. It returns the server's address.
func serveWithPrivateCA(t *testing.T, ns string) string {
	t.Helper()
	ca, addr := serveTLS(t, "trusted by a private CA")
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "private-ca"}, Data: map[string][]byte{"ca.crt": ca.PEM}})
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "truststore-pw"}, StringData: map[string]string{"password": "e2e-truststore"}})
	return addr
}

// serveTLS serves body over HTTPS at the cluster's address on the host (which pods reach), with
// a certificate of a new CA, until the test ends. It returns the CA and the server's address.
func serveTLS(t *testing.T, body string) (*testca.CA, string) {
	t.Helper()
	host := env.Cluster.HostAddress()
	ca := testca.New(t, host)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, body)
	}))
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	_ = srv.Listener.Close()
	srv.Listener = l
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Server}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return ca, srv.Listener.Addr().String()
}

// checkRESTOnTheClasspath checks that a REST DSL endpoint, served on port 8085, got a Service of
// type NodePort with the service trait's port hello, 85 to 8085, and answers through it with a
// file of the jar jvm.classpath adds.
func checkRESTOnTheClasspath(t *testing.T, key client.ObjectKey) {
	t.Helper()
	g := NewWithT(t)
	svc := &corev1.Service{}
	g.Expect(env.Client.Get(context.Background(), key, svc)).To(Succeed(), "no Service for the REST DSL")
	g.Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeNodePort))
	g.Expect(svc.Spec.Ports).To(ContainElement(And(HaveField("Name", "hello"), HaveField("Port", int32(85)),
		HaveField("TargetPort.IntVal", int32(8085)))))
	g.Eventually(httpBody("http://"+net.JoinHostPort(svc.Spec.ClusterIP, "85")+"/greet"), timeout, poll).Should(Equal("from a jar on the classpath"))
}

// phaseAndReady reads an integration's phase and the reason and message of its Ready condition,
// "PHASE REASON MESSAGE", its phase alone before it has the condition.
func phaseAndReady(key client.ObjectKey) func() (string, error) {
	return func() (string, error) {
		it, err := getIntegration(key)
		if err != nil {
			return "", err
		}
		ready := it.Status.GetCondition(camelv1.ConditionReady)
		if ready == nil {
			return string(it.Status.Phase), nil
		}
		return fmt.Sprintf("%s %s %s", it.Status.Phase, ready.Reason, ready.Message), nil
	}
}

// replicasOf reads an integration's status.replicas.
func replicasOf(key client.ObjectKey) func() (*int32, error) {
	return func() (*int32, error) {
		it, err := getIntegration(key)
		if err != nil {
			return nil, err
		}
		return it.Status.Replicas, nil
	}
}

// serviceType reads the type of a Service.
func serviceType(key client.ObjectKey) func() (corev1.ServiceType, error) {
	return func() (corev1.ServiceType, error) {
		svc := &corev1.Service{}
		err := env.Client.Get(context.Background(), key, svc)
		return svc.Spec.Type, err
	}
}

// kameletCatalogInstalled waits until operator jvm's platform, in namespace ops, says that it
// installed its Kamelet catalog, and returns what it says.
func kameletCatalogInstalled(t *testing.T, ops string) string {
	t.Helper()
	var msg string
	NewWithT(t).Eventually(func() (string, error) {
		itp := &camelv1.IntegrationPlatform{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ops, Name: "jvm"}, itp); err != nil {
			return "", err
		}
		c := meta.FindStatusCondition(itp.Status.Conditions, "KameletCatalogAvailable")
		if c == nil {
			return "", nil
		}
		msg = c.Message
		return string(c.Status) + " " + c.Reason, nil
	}, mavenTimeout, poll).Should(Equal("True CatalogInstalled"), func() string { return msg })
	return msg
}

// checkKameletCatalog checks that operator jvm installed, as Camel K does, the Kamelet catalog of
// its Camel version into its namespace ops, in place of the four Kamelets an earlier installer
// brought (here the harness, for the operators of ops without the catalog); that a
// Pipe of namespace apps runs with a step of the catalog's; then deletes a Kamelet of the catalog
// for checkAProfileARepositoryAndASecondRun to find it on the classpath.
func checkKameletCatalog(t *testing.T, cli func(...string) (string, string, error), ops, apps string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	msg := kameletCatalogInstalled(t, ops)
	t.Logf("the platform says: %s", msg)
	g.Expect(msg).To(MatchRegexp(`the Kamelet catalog 4\.18\.0 is installed in \S+ in [0-9.]+m?s: 2[0-9]{2} Kamelets applied, 4 in place of the installer's$`))
	k := &camelv1.Kamelet{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ops, Name: "timer-source"}, k)).To(Succeed())
	g.Expect(k.Labels).To(HaveKeyWithValue("camel.apache.org/kamelet.bundled", "true"), "the catalog's timer-source replaced the installer's")
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ops, Name: "set-body-action"}, k)).To(Succeed())
	g.Expect(k.Labels).To(HaveKeyWithValue("camel.apache.org/kamelet.bundled", "true"))
	g.Eventually(func() (camelv1.KameletPhase, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(k), k)
		return k.Status.Phase, err
	}, timeout, poll).Should(Equal(camelv1.KameletPhaseReady))

	t.Log("a Pipe with a step of the catalog, not one of the four, logs what the step sets")
	out, errOut, err := cli("bind", "timer-source", "log-sink", "--step", "set-body-action", "-p", "source.message=unseen",
		"-p", "step-0.value=Hello from the catalog", "-x", "jvm", "--name", "catalog-step")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	g.Eventually(integrationLog(cli, "catalog-step"), mavenTimeout, poll).Should(ContainSubstring("Hello from the catalog"))

	checkAStarterDeletedGivesWayToTheCatalog(t, ops)
	g.Expect(env.Client.Delete(ctx, &camelv1.Kamelet{ObjectMeta: metav1.ObjectMeta{Namespace: ops, Name: "drop-header-action"}})).To(Succeed())
	checkAProfileARepositoryAndASecondRun(t, cli, ops, apps)
	// Its JVM costs CPU the next steps need.
	g.Expect(env.Client.Delete(ctx, &camelv1.Pipe{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "catalog-step"}})).To(Succeed())
}

// checkAStarterDeletedGivesWayToTheCatalog: where an upgrade deletes a Kamelet an earlier installer
// shipped (Helm, upgrading to a chart without it), the operator of ops applies the catalog's of
// its name at once, and only it: the others are left as they are.
func checkAStarterDeletedGivesWayToTheCatalog(t *testing.T, ops string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	starters, err := kamelets.Catalog()
	g.Expect(err).NotTo(HaveOccurred())
	starter := starters[slices.IndexFunc(starters, func(k *camelv1.Kamelet) bool { return k.Name == "insert-header-action" })]
	g.Expect(env.Client.Delete(ctx, &camelv1.Kamelet{ObjectMeta: metav1.ObjectMeta{Namespace: ops, Name: starter.Name}})).To(Succeed())
	starter.Namespace = ops
	g.Expect(env.Client.Create(ctx, starter, client.FieldOwner("helm"))).To(Succeed())
	g.Expect(env.Client.Delete(ctx, starter)).To(Succeed())
	k := &camelv1.Kamelet{}
	g.Eventually(func() (map[string]string, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(starter), k)
		return k.Labels, err
	}, timeout, poll).Should(HaveKeyWithValue("camel.apache.org/kamelet.bundled", "true"))
	g.Eventually(func() (string, error) {
		itp := &camelv1.IntegrationPlatform{}
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ops, Name: "jvm"}, itp)
		return meta.FindStatusCondition(itp.Status.Conditions, "KameletCatalogAvailable").Message, err
	}, timeout, poll).Should(MatchRegexp(`: 1 Kamelets applied, 2[0-9]{2} already current$`))
}

// httpBody is the body of a GET of url.
func httpBody(url string) func() (string, error) {
	return func() (string, error) {
		resp, err := http.Get(url)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return string(body), err
	}
}
