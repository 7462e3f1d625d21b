// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package e2e

import (
	"context"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/build"
	kitpkg "github.com/caravan-dev/caravan/internal/kit"
	"github.com/caravan-dev/caravan/test/harness"
)

// quarkusName is the integration that runs the timer route on Camel Quarkus, quarkusDBName the
// one that runs Camel K's datasource example.
const (
	quarkusName   = "timer-quarkus"
	quarkusDBName = "quarkus-db"
)

// quarkusOperator is the operator whose platform builds on Camel Quarkus; quarkusPipe is a Pipe it
// runs, providerRoll an integration that moves to it from a camel-main operator.
const (
	quarkusOperator = "jvm-q"
	quarkusPipe     = "pipe-quarkus"
	providerRoll    = "provider-roll"
)

// installQuarkusOperator installs the operator whose platform's spec.build.runtimeProvider is
// quarkus, as a platform team sets it, with a Maven cache that its kits share.
func installQuarkusOperator(t *testing.T, ops string) *harness.Operator {
	t.Helper()
	op := env.InstallOperator(t, quarkusOperator, ops, harness.OperatorOptions{BuildStrategy: build.StrategyPod,
		MavenCache: ptr.To(resource.MustParse("1Gi"))})
	NewWithT(t).Expect(env.Client.Patch(context.Background(), &camelv1.IntegrationPlatform{ObjectMeta: metav1.ObjectMeta{Namespace: ops, Name: quarkusOperator}},
		client.RawPatch(types.MergePatchType, []byte(`{"spec":{"build":{"runtimeProvider":"quarkus"}}}`)))).To(Succeed())
	return op
}

// startQuarkus runs the timer route on the quarkus provider, with a quarkus.* property that
// changes its log's format and the prometheus trait, Camel K's datasource example against a
// PostgreSQL server of Debian's packages, a Pipe on the operator whose platform builds on Camel
// Quarkus and the timer route on camel-main with quarkus.log.* keys, so that their kits build while
// the other cases run.
func startQuarkus(t *testing.T, cli func(...string) (string, string, error), ops, apps string) {
	t.Helper()
	g := NewWithT(t)
	// -Xshare:on: a JVM that cannot map the kit's class-data-sharing archive does not start.
	out, errOut, err := cli("run", filepath.Join("testdata", "camel", "timer.yaml"), "--name", quarkusName, "-x", "jvm",
		"--runtime-provider", "plain-quarkus", "-p", "greeting=Hello from Camel Quarkus", "-t", "jvm.options=-Xshare:on",
		"-p", "quarkus.log.console.format=[read by Quarkus] %m%n", "-t", "prometheus.enabled=true", "-t", "prometheus.pod-monitor=false")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	db := env.StartPostgreSQL(t, apps)
	// The credentials come in a --config Secret's .properties key, which Quarkus reads too.
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "quarkus-db"},
		StringData: map[string]string{"db.properties": "quarkus.datasource.username=" + db.User + "\nquarkus.datasource.password=unused\n"}})
	// camel-jdbc itself: its Camel Quarkus extension is not served at the default platform version.
	out, errOut, err = cli("run", filepath.Join("testdata", "camel", "db.yaml"), "--name", quarkusDBName, "-x", "jvm",
		"-t", "camel.runtimeProvider=quarkus", "-d", "mvn:org.apache.camel:camel-jdbc:4.17.0", "-d", "mvn:io.quarkus:quarkus-jdbc-postgresql",
		"--build-property", "quarkus.datasource.db-kind=postgresql", "-p", "greeting=Hello from a database",
		"-p", "quarkus.datasource.jdbc.url="+db.JDBCURL(), "--config", "secret:quarkus-db", "-p", "quarkus.http.port=8081")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)

	// The Pipe's kit is the first of its operator, whose Maven cache is empty: it builds meanwhile,
	// once the catalog's Kamelets, which it runs, are in place (and their install's writes done).
	kameletCatalogInstalled(t, ops)
	out, errOut, err = cli("bind", "timer-source", "log-sink", "-p", "source.message=Hello from a Pipe on Camel Quarkus",
		"-x", quarkusOperator, "--name", quarkusPipe)
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	out, errOut, err = cli("run", filepath.Join("testdata", "camel", "timer.yaml"), "--name", providerRoll, "-x", "jvm",
		"-p", "greeting=Hello across providers", "-p", "quarkus.log.level=WARN", "-p", "quarkus.log.category.caravan.level=INFO",
		"-p", "quarkus.http.port=8081")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	g.Expect(errOut).To(ContainSubstring("quarkus.http.port, quarkus.log.category.caravan.level, quarkus.log.level"),
		"caravan run did not warn that camel-main reads no quarkus.* key")
}

// checkQuarkusByItsPlatform checks, as on Camel K whose platform names its runtime provider, the
// operator whose platform builds on Camel Quarkus: its Pipe runs its Kamelets there; an integration
// moved to it from a camel-main operator rolls to its Quarkus kit, never below one ready pod, and
// the quarkus.* keys camel-main ignored now move its HTTP route's port and set its log's levels.
func checkQuarkusByItsPlatform(t *testing.T, cli func(...string) (string, string, error), apps string) {
	t.Helper()
	g := NewWithT(t)
	t.Log("as on Camel K, the platform's spec.build.runtimeProvider makes every kit of its operator a Camel Quarkus application: a Pipe's Kamelets run there")
	pipe := &camelv1.Pipe{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: quarkusPipe}}
	g.Eventually(func() error { return bindingReadyUnder(pipe, quarkusOperator) }, mavenTimeout, poll).Should(Succeed())
	pipeKey := client.ObjectKeyFromObject(pipe)
	g.Expect(kitpkg.ProviderOf(builtKit(t, pipeKey, camelv1.IntegrationKitPhaseReady))).To(Equal("quarkus"))
	g.Expect(jvmPod(t, pipeKey).Spec.Containers[0].Args).To(ContainElement("io.quarkus.bootstrap.runner.QuarkusEntryPoint"))
	g.Eventually(integrationLog(cli, quarkusPipe), timeout, poll).Should(And(
		ContainSubstring("Apache Camel Quarkus 3.31.0"), ContainSubstring("Hello from a Pipe on Camel Quarkus")))
	out, errOut, err := cli("run", filepath.Join("testdata", "camel", "timer.yaml"), "--name", "quarkus-keys", "-x", quarkusOperator,
		"-p", "quarkus.log.level=WARN", "--dry-run=server")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	g.Expect(errOut).NotTo(ContainSubstring("quarkus.log.level"), "caravan run warned of a quarkus.* key that the operator's Camel Quarkus reads")

	t.Log("an integration moved from a camel-main operator to it rolls to its Quarkus kit, never below one ready pod")
	key := client.ObjectKey{Namespace: apps, Name: providerRoll}
	before := jvmPod(t, key)
	g.Expect(before.Spec.Containers[0].Args).NotTo(ContainElement("io.quarkus.bootstrap.runner.QuarkusEntryPoint"))
	g.Eventually(integrationLog(cli, providerRoll), timeout, poll).Should(And(
		ContainSubstring("Apache Camel 4.18.0"), ContainSubstring("Hello across providers #2")), "camel-main reads no quarkus.log.level")
	g.Eventually(answersHTTP(before), timeout, poll).Should(Equal("200 Hello across providers over HTTP"), "camel-main reads no quarkus.http.port")
	it, err := getIntegration(key)
	g.Expect(err).NotTo(HaveOccurred())
	ignored := it.Status.GetCondition(camelv1.ConditionTraitsIgnored)
	g.Expect(ignored).NotTo(BeNil())
	g.Expect(ignored.Message).To(ContainSubstring("quarkus.log.level"))
	ready := watchReadyPods(apps, providerRoll)
	reassign(t, it, quarkusOperator)
	g.Eventually(func() ([]corev1.Pod, error) { return podsOf(key)() }, mavenTimeout, poll).Should(ConsistOf(And(
		HaveField("Spec.Containers", ConsistOf(HaveField("Args", ContainElement("io.quarkus.bootstrap.runner.QuarkusEntryPoint")))),
		Satisfy(func(p corev1.Pod) bool { return podReady(&p) }))), "the integration did not roll to a ready Quarkus pod")
	minimum, samples, pods := ready.Stop()
	t.Logf("ready pods through the roll: at least %d in %d samples, %d pods in all", minimum, samples, pods)
	g.Expect(minimum).To(BeNumerically(">=", 1), "the roll went below one ready pod")
	g.Expect(pods).To(BeNumerically(">=", 2))
	waitRunningUnder(t, key, quarkusOperator)
	g.Expect(kitpkg.ProviderOf(builtKit(t, key, camelv1.IntegrationKitPhaseReady))).To(Equal("quarkus"))

	t.Log("Quarkus reads quarkus.http.port: the HTTP route answers on 8081, and through its Service, which targets the container's moved port")
	after := jvmPod(t, key)
	g.Expect(after.Spec.Containers[0].Ports).To(ContainElement(HaveField("ContainerPort", int32(8081))))
	g.Eventually(httpBody("http://"+net.JoinHostPort(after.Status.PodIP, "8081")+"/hello"), timeout, poll).Should(Equal("Hello across providers over HTTP"))
	svc := &corev1.Service{}
	g.Expect(env.Client.Get(context.Background(), key, svc)).To(Succeed())
	g.Eventually(httpBody("http://"+net.JoinHostPort(svc.Spec.ClusterIP, "80")+"/hello"), timeout, poll).Should(Equal("Hello across providers over HTTP"),
		"the route does not answer through its Service")

	t.Log("Quarkus reads the quarkus.log.* keys: its INFO lines are gone but the route's logger's, which quarkus.log.category sets")
	g.Eventually(integrationLog(cli, providerRoll), timeout, poll).Should(ContainSubstring("Hello across providers #3"))
	log, err := integrationLog(cli, providerRoll)()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(log).NotTo(Or(ContainSubstring("Apache Camel"), ContainSubstring("powered by Quarkus")),
		"quarkus.log.level=WARN did not hide Quarkus' and Camel's INFO lines")
	g.Eventually(func() (*metav1.Condition, error) {
		it, err := getIntegration(key)
		if err != nil {
			return nil, err
		}
		return it.Status.GetCondition(camelv1.ConditionTraitsIgnored), nil
	}, timeout, poll).Should(BeNil(), "quarkus.* keys are still reported ignored on Camel Quarkus")
}

// checkQuarkusDatasource checks the datasource example: the integration is ready once Quarkus'
// datasource health check reaches PostgreSQL, on the port quarkus.http.port moved it to, and
// logs the rows it wrote and read back.
func checkQuarkusDatasource(t *testing.T, cli func(...string) (string, string, error), apps string) {
	t.Helper()
	g := NewWithT(t)
	t.Log("as in Camel K's datasource example, a Quarkus datasource of quarkus.datasource.* (db-kind at build time, the user from a --config Secret)" +
		" writes to and reads from PostgreSQL; quarkus.http.port moves the HTTP server, and the probes follow it")
	key := client.ObjectKey{Namespace: apps, Name: quarkusDBName}
	builtKit(t, key, camelv1.IntegrationKitPhaseReady)
	pod := jvmPod(t, key)
	g.Expect(pod.Spec.Containers[0].ReadinessProbe.HTTPGet.Port.IntValue()).To(Equal(8081))
	g.Eventually(httpBody("http://"+net.JoinHostPort(pod.Status.PodIP, "8081")+"/q/health/ready"), timeout, poll).Should(
		And(ContainSubstring(`"name": "Database connections health check"`), ContainSubstring(`"<default>": "UP"`)))
	g.Eventually(integrationLog(cli, quarkusDBName), timeout, poll).Should(
		MatchRegexp(`read back from PostgreSQL: \[\{word=Hello from a database #[2-9]\}\]`))
}

// checkQuarkus checks what startQuarkus ran: a kit that Quarkus' Maven plugin built, with a
// class-data-sharing archive the JVM maps, a JVM that Quarkus' health check finds ready, whose HTTP
// route and metrics answer and whose log Quarkus formats.
func checkQuarkus(t *testing.T, cli func(...string) (string, string, error), apps string) {
	t.Helper()
	g := NewWithT(t)
	t.Log("as on Camel K's plain-quarkus, the same YAML route runs on Camel Quarkus: its kit is the application Quarkus' Maven plugin built," +
		" which reads the route, the properties and quarkus.* configuration at start")
	key := client.ObjectKey{Namespace: apps, Name: quarkusName}
	kit := builtKit(t, key, camelv1.IntegrationKitPhaseReady)
	g.Expect(kitpkg.ProviderOf(kit)).To(Equal("quarkus"), "plain-quarkus is Caravan's quarkus provider")
	t.Log("its kit holds a class-data-sharing archive of Quarkus' start, made by a training start in the builder pod; the JVM maps it")
	archived := kit.Status.GetCondition(kitpkg.ArchiveCondition)
	g.Expect(archived).NotTo(BeNil())
	g.Expect(archived.Status).To(BeEquivalentTo("True"), archived.Message)
	g.Expect(archived.Message).To(MatchRegexp(`archive of [1-9]\d{3} classes`))
	t.Logf("kit %s: %s", kit.Name, archived.Message)
	out, errOut, err := cli("get", "kits", kit.Name)
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	g.Expect(out).To(MatchRegexp(`PROVIDER[\s\S]*` + kit.Name + `\s+Ready\s+platform\s+quarkus\s`))

	pod := jvmPod(t, key)
	c := pod.Spec.Containers[0]
	g.Expect(c.Args).To(ContainElements("-Xshare:on", "-XX:SharedArchiveFile=/deployments/kit.jsa", "io.quarkus.bootstrap.runner.QuarkusEntryPoint"))
	g.Expect(c.ReadinessProbe.HTTPGet.Path).To(Equal("/q/health/ready"))
	g.Eventually(answersHTTP(pod), timeout, poll).Should(Equal("200 Hello from Camel Quarkus over HTTP"))
	t.Log("as on Camel K, the prometheus trait has Quarkus serve Camel's meters at /q/metrics, on its HTTP port, which the pod's annotations name")
	g.Expect(pod.Annotations).To(And(HaveKeyWithValue("prometheus.io/path", "/q/metrics"), HaveKeyWithValue("prometheus.io/port", "8080")))
	g.Eventually(httpBody("http://"+net.JoinHostPort(pod.Status.PodIP, "8080")+"/q/metrics"), timeout, poll).Should(
		MatchRegexp(`(?m)^camel_exchanges_total\{[^}]*\} [1-9]`))
	g.Eventually(integrationLog(cli, quarkusName), timeout, poll).Should(And(
		MatchRegexp(`\[read by Quarkus\] Exchange\[.*Body: Hello from Camel Quarkus #2\]`),
		ContainSubstring("Apache Camel Quarkus 3.31.0"), ContainSubstring("powered by Quarkus 3.31.2")))
	it, err := getIntegration(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(it.Status.GetCondition(camelv1.ConditionReady).Status).To(BeEquivalentTo("True"))

	t.Log("moved to an operator that makes the same Quarkus kit, it keeps its JVM: the new owner's kit wraps the image, with its provider")
	maxCount := func() int { return slices.Max(append(counts(t, cli, quarkusName, quarkusLine), 0)) }
	last := maxCount()
	reassign(t, it, "jvm-b")
	waitRunningUnder(t, key, "jvm-b")
	g.Eventually(maxCount, timeout, poll).Should(BeNumerically(">", last+3), "no new lines after the move")
	after := jvmPod(t, key)
	g.Expect(after.UID).To(Equal(pod.UID), "the move replaced the pod")
	g.Expect(after.Status.ContainerStatuses[0].RestartCount).To(BeZero(), "the move restarted the JVM")
	it, err = getIntegration(key)
	g.Expect(err).NotTo(HaveOccurred())
	wrapper := &camelv1.IntegrationKit{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: apps, Name: it.Status.IntegrationKit.Name}, wrapper)).To(Succeed())
	g.Expect(kitpkg.ProviderOf(wrapper)).To(Equal("quarkus"))
	g.Expect(wrapper.Annotations).To(HaveKeyWithValue(kitpkg.AdoptedFromAnnotation, kit.Name))
}

// quarkusLine is a line the timer route logs on Camel Quarkus, with its count.
var quarkusLine = regexp.MustCompile(`Body: Hello from Camel Quarkus #(\d+)`)
