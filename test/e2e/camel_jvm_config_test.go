package e2e

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
	"software.sslmate.com/src/go-pkcs12"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/pipe"
	"github.com/caravan-dev/caravan/internal/testca"
	"github.com/caravan-dev/caravan/test/harness"
)

// createResourceCases creates the ConfigMaps and Secrets of Camel K's resource and property
// cases that the integration two mounts: see files.yaml.
func createResourceCases(t *testing.T, apps string) {
	t.Helper()
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "res-dir"}, Data: map[string]string{"dir.txt": "from-a-resource-directory"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "res-multi"}, Data: map[string]string{"first": "first-of-multi", "second": "second-of-multi"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "deps"}, BinaryData: map[string][]byte{
			"deprecated.jar": jarOf(t, "deprecated-path.txt", "from a jar at the deprecated path"),
			"specific.jar":   jarOf(t, "specific-path.txt", "from a jar at a path of its own")}},
	} {
		create(t, cm)
	}
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "prop-secret"}, StringData: map[string]string{"secret.prop": "from-a-secret-property"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "res-secret"}, StringData: map[string]string{"sec.txt": "from-a-resource-secret"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "multi-sec"}, StringData: map[string]string{"one.word": "one-of-a-secret", "two.word": "two-of-a-secret"}},
	} {
		create(t, s)
	}
}

// checkResourceCases checks, as Camel K's config cases do, that two reads a property of -p
// secret:, a ConfigMap mounted at a directory of --resource @PATH, one key of a ConfigMap at a
// file, a Secret of --resource, a filtered Secret key of --config alone in its directory, and
// jars that mount.resources put at a path of their own, on the classpath as Camel K has them;
// and that its JVM trusts the CA of the jvm trait's base truststore.
func checkResourceCases(t *testing.T, cli func(...string) (string, string, error)) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(integrationLog(cli, "two"), timeout, poll).Should(And(
		ContainSubstring("files: from-a-secret-property and two-of-a-secret"),
		ContainSubstring("files: a directory resource says from-a-resource-directory"),
		ContainSubstring("files: a filtered resource test.txt says second-of-multi"),
		ContainSubstring("files: a secret resource says from-a-resource-secret"),
		ContainSubstring("files: a filtered secret holds two.word"),
		ContainSubstring("files: the jar at /etc/camel/resources says from a jar at the deprecated path"),
		ContainSubstring("files: the jar at /etc/other/resources says from a jar at a path of its own"),
		ContainSubstring("files: the base truststore says trusted by the base truststore")))
	log, err := integrationLog(cli, "two")()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(log).NotTo(ContainSubstring("first-of-multi"), "a filtered ConfigMap key mounted the others")
	g.Expect(log).NotTo(ContainSubstring("a filtered secret holds one.word"), "a filtered Secret key mounted the others")
}

// checkPipeConfigurations checks Camel K's Pipe configuration cases on one Pipe: the source's
// required message, which the Pipe does not give, and the sink's logger name, over the Kamelet's
// default, from the Kamelets' default configuration in a mounted Secret; and a property of the
// sink whose placeholder a mounted ConfigMap fills.
func checkPipeConfigurations(t *testing.T, cli func(...string) (string, string, error), apps string) {
	t.Helper()
	g := NewWithT(t)
	t.Log("a Pipe from timer-source to log-sink takes the Kamelets' default configuration from a mounted Secret (a required message," +
		" and a logger name over its default) and a placeholder from a mounted ConfigMap, as in Camel K's pipe config cases")
	create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "pipe-config"}, Data: map[string]string{"pipe.body-type": "false"}})
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "pipe-defaults"}, StringData: map[string]string{
		"camel.kamelet.timer-source.message": "Hello from a Pipe's default configuration",
		"camel.kamelet.log-sink.loggerName":  "pipeSecretLogger"}})
	out, errOut, err := cli("bind", "timer-source", "log-sink", "-p", "sink.showBodyType={{pipe.body-type}}",
		"-t", "mount.configs=configmap:pipe-config", "-t", "mount.configs=secret:pipe-defaults", "-x", "jvm", "--name", "ticker")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	jvmPod(t, client.ObjectKey{Namespace: apps, Name: "ticker"})
	g.Eventually(integrationLog(cli, "ticker"), timeout, poll).Should(MatchRegexp(`pipeSecretLogger.*Hello from a Pipe's default configuration`))
	log, err := integrationLog(cli, "ticker")()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(log).NotTo(ContainSubstring("BodyType:"), "the ConfigMap's showBodyType=false did not reach log-sink")
}

// checkALateConfigMap checks, as Camel K's case of a ConfigMap with an owner reference does,
// that an integration mounting a ConfigMap that does not exist yet does not run, its Ready
// condition naming the ConfigMap its pod waits for, and runs once the ConfigMap is created,
// owned by the integration.
func checkALateConfigMap(t *testing.T, cli func(...string) (string, string, error), key client.ObjectKey) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(phaseAndReady(key), mavenTimeout, poll).Should(And(HavePrefix("Deploying VolumesNotMounted "), ContainSubstring("kamelet-named")),
		"the Ready condition does not name the ConfigMap the pod waits for")
	before, _ := phaseAndReady(key)()
	t.Logf("before the ConfigMap it mounts exists, %s is %q", key.Name, before)
	it, err := getIntegration(key)
	g.Expect(err).NotTo(HaveOccurred())
	create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: "kamelet-named",
		Labels:          map[string]string{camelv1.IntegrationLabel: key.Name},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: camelv1.GroupVersion.String(), Kind: "Integration", Name: key.Name, UID: it.UID}}},
		Data: map[string]string{"camel.kamelet.timer-source.named.message": "Hello from a named configuration"}})
	jvmPod(t, key)
}

// checkHotReloadOff checks, as Camel K's case does, that a change of a mounted ConfigMap does not
// reach an integration without mount.hot-reload: its JVM runs on with the old value.
func checkHotReloadOff(t *testing.T, cli func(...string) (string, string, error), key client.ObjectKey) {
	t.Helper()
	g := NewWithT(t)
	pod := jvmPod(t, key)
	g.Expect(env.Client.Patch(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: "kamelet-named"}},
		client.RawPatch(types.MergePatchType, []byte(`{"data":{"camel.kamelet.timer-source.named.message":"Hello from a changed configuration"}}`)))).To(Succeed())
	g.Consistently(integrationLog(cli, key.Name), 15*time.Second, poll).ShouldNot(ContainSubstring("Hello from a changed configuration"))
	g.Expect(jvmPod(t, key).UID).To(Equal(pod.UID), "the pod was replaced without mount.hot-reload")
}

// checkPipeErrorHandler checks Camel K's Pipe cases of an error handler and of scaling: a Pipe
// whose source fails has its messages logged by the error handler's sink, with -p
// error-handler properties, never by its sink; and its scale subresource, to 2 and back to 1,
// reaches the pods and the status replicas of the Integration and the Pipe.
func checkPipeErrorHandler(t *testing.T, cli func(...string) (string, string, error), apps string) {
	t.Helper()
	g := NewWithT(t)
	t.Log("as in Camel K's Pipe cases, a failing source's messages reach the error handler's sink, not the sink; the Pipe scales through its scale subresource")
	data, err := os.ReadFile(filepath.Join("testdata", "camel", "error-producer-source.kamelet.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	k := &camelv1.Kamelet{}
	g.Expect(yaml.UnmarshalStrict(data, k)).To(Succeed())
	k.Namespace = apps
	create(t, k)
	out, errOut, err := cli("bind", "error-producer-source", "log-sink", "--error-handler", "sink:log-sink", "-p", "source.message=throw Error",
		"-p", "sink.loggerName=integrationLogger", "-p", "error-handler.loggerName=kameletErrorHandler", "-x", "jvm", "--name", "throw-error")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	key := client.ObjectKey{Namespace: apps, Name: "throw-error"}
	jvmPod(t, key)
	g.Eventually(integrationLog(cli, key.Name), timeout, poll).Should(MatchRegexp(`kameletErrorHandler.*throw Error`))
	log, err := integrationLog(cli, key.Name)()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(log).NotTo(ContainSubstring("integrationLogger"), "a failed message reached the sink")

	p := &camelv1.Pipe{}
	g.Expect(env.Client.Get(context.Background(), key, p)).To(Succeed())
	for _, n := range []int32{2, 1} {
		scaleTo(t, p, n)
		g.Eventually(replicasOf(key), mavenTimeout, poll).Should(HaveValue(Equal(n)), "the Integration's status.replicas")
		g.Eventually(func() (*int32, error) {
			err := env.Client.Get(context.Background(), key, p)
			return p.Status.Replicas, err
		}, timeout, poll).Should(HaveValue(Equal(n)), "the Pipe's status.replicas")
		g.Eventually(podsOf(key), timeout, poll).Should(HaveLen(int(n)))
	}
	g.Expect(env.Client.Delete(context.Background(), p)).To(Succeed())
}

// serveWithABaseTruststore serves "trusted by the base truststore" over HTTPS on the host's
// loopback, with a certificate of a CA of its own, and puts a PKCS12 truststore holding that CA,
// and its password, in the Secret base-ts of ns. It returns the server's address.
func serveWithABaseTruststore(t *testing.T, ns string) string {
	t.Helper()
	g := NewWithT(t)
	ca, addr := serveTLS(t, "trusted by the base truststore")
	block, _ := pem.Decode(ca.PEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	g.Expect(err).NotTo(HaveOccurred())
	const password = "e2e-base-truststore"
	p12, err := pkcs12.Modern2023.EncodeTrustStore([]*x509.Certificate{cert}, password)
	g.Expect(err).NotTo(HaveOccurred())
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "base-ts"},
		Data: map[string][]byte{"base.p12": p12, "password": []byte(password)}})
	return addr
}

// checkAStoppedPipe checks, as Camel K's case of a stopped Pipe does, that a Pipe whose route is
// stopped (by a route of its spec.integration, through the control bus) is RuntimeNotReady, its
// Ready condition and its Integration's naming the stopped route.
func checkAStoppedPipe(t *testing.T, cli func(...string) (string, string, error), apps string) {
	t.Helper()
	g := NewWithT(t)
	t.Log("as on Camel K, a Pipe whose route is stopped is not ready, its Ready condition naming the route")
	kamelet := func(name string, props map[string]any) camelv1.Endpoint {
		raw := harness.Raw(props)
		return camelv1.Endpoint{Ref: &corev1.ObjectReference{Kind: "Kamelet", APIVersion: camelv1.GroupVersion.String(), Name: name}, Properties: &raw}
	}
	p := &camelv1.Pipe{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "stopped-pipe", Annotations: map[string]string{camelv1.OperatorIDAnnotation: "jvm"}},
		Spec: camelv1.PipeSpec{Source: kamelet("timer-source", map[string]any{"message": "Magicstring!"}),
			Sink: kamelet("log-sink", map[string]any{"loggerName": "binding"}),
			Integration: &camelv1.IntegrationSpec{Dependencies: []string{"camel:controlbus"}, Flows: []camelv1.RawObject{harness.Raw(map[string]any{
				"from": map[string]any{"uri": "timer:stopper", "parameters": map[string]any{"delay": 10000, "repeatCount": 1},
					"steps": []any{map[string]any{"to": "controlbus:route?routeId=" + pipe.RouteID + "&action=stop"}}}})}}}}
	create(t, p)
	key := client.ObjectKeyFromObject(p)
	g.Eventually(integrationLog(cli, key.Name), mavenTimeout, poll).Should(ContainSubstring("Magicstring!"))
	stopped := And(HavePrefix("Error RuntimeNotReady 1/1 pods are not ready"), ContainSubstring("route:binding (Route binding has status Stopped) DOWN"))
	g.Eventually(phaseAndReady(key), timeout, poll).Should(stopped)
	g.Eventually(func() (string, error) {
		err := env.Client.Get(context.Background(), key, p)
		c := meta.FindStatusCondition(p.Status.Conditions, string(camelv1.ConditionReady))
		if err != nil || c == nil {
			return "", err
		}
		return fmt.Sprintf("%s %s %s", p.Status.Phase, c.Reason, c.Message), nil
	}, timeout, poll).Should(And(HavePrefix("Error RuntimeNotReady Integration stopped-pipe: 1/1 pods are not ready"),
		ContainSubstring("route:binding (Route binding has status Stopped) DOWN")), "the Pipe's Ready condition does not tell its Integration's")
	g.Expect(env.Client.Delete(context.Background(), p)).To(Succeed())
}

// checkAProfileARepositoryAndASecondRun checks Camel K's cases of an IntegrationProfile, of
// --maven-repository and of a trait updated by a second run on one integration, classpath: a route
// through a Kamelet the cluster lacks runs from the camel-kamelets jar of its dependencies; the
// profile it names gives its kit a dependency and its pod the container trait's name and CPU limit;
// a jar of a repository only --maven-repository names is on its classpath. A second `caravan run`
// with a property more rolls its pod, never below one running; a change of the profile rolls it
// again, with the profile's new container name.
func checkAProfileARepositoryAndASecondRun(t *testing.T, cli func(...string) (string, string, error), ops, apps string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	t.Log("as on Camel K, the IntegrationProfile an integration names gives it dependencies and traits; --maven-repository adds a repository" +
		" its build resolves a jar from; a Kamelet the cluster lacks is found in the camel-kamelets jar of the dependencies")
	// Over HTTPS, with a CA the platform's Maven trusts meanwhile: Maven refuses plain HTTP but on
	// the loopback, which the kubelet node's pods do not share.
	ca := testca.New(t, env.Cluster.HostAddress())
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ops, Name: "e2e-only-ca"}, Data: map[string][]byte{"ca.crt": ca.PEM}})
	trust := func(caSecrets string) {
		t.Helper()
		g.Expect(env.Client.Patch(ctx, &camelv1.IntegrationPlatform{ObjectMeta: metav1.ObjectMeta{Namespace: ops, Name: "jvm"}},
			client.RawPatch(types.MergePatchType, []byte(`{"spec":{"build":{"maven":{"caSecrets":`+caSecrets+`}}}}`)))).To(Succeed())
	}
	trust(`[{"name":"e2e-only-ca","key":"ca.crt"}]`)
	defer trust("null")
	repo := serveRepository(t, false, ca)
	profile := &camelv1.IntegrationProfile{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "with-jackson"},
		Spec: camelv1.IntegrationProfileSpec{Dependencies: []string{"camel:jackson"}, Traits: camelv1.Traits{
			"container": harness.Raw(map[string]any{"name": "ck-integration-global", "limitCPU": "0.3"})}}}
	create(t, profile)
	run := []string{"run", filepath.Join("testdata", "camel", "classpath.yaml"), "--name", "classpath", "-x", "jvm",
		"-d", "mvn:org.apache.camel.kamelets:camel-kamelets:4.18.0", "-d", "mvn:dev.caravan.e2e:greeting:1.0",
		"--maven-repository", repo.url + "@id=e2e-only", "--annotation", camelv1.IntegrationProfileAnnotation + "=with-jackson"}
	out, errOut, err := cli(run...)
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	key := client.ObjectKey{Namespace: apps, Name: "classpath"}
	g.Eventually(integrationLog(cli, "classpath"), mavenTimeout, poll).Should(And(ContainSubstring("classpath says hello"),
		ContainSubstring("hello is unset; the repository's jar says hello from a private repository")))
	log, _ := integrationLog(cli, "classpath")()
	g.Expect(log).To(ContainSubstring("Headers: {}, BodyType: String, Body: classpath says hello"), "the Kamelet did not drop the header")
	it, err := getIntegration(key)
	g.Expect(err).NotTo(HaveOccurred())
	c := meta.FindStatusCondition(it.Status.Conditions, "KameletsAvailable")
	g.Expect(c).NotTo(BeNil())
	g.Expect(c.Status).To(Equal(metav1.ConditionUnknown))
	g.Expect(c.Message).To(ContainSubstring("the Kamelets drop-header-action are in neither namespace"))
	g.Expect(it.Status.Dependencies).To(ContainElement("camel:jackson"), "the profile's dependency is not the integration's")
	g.Expect(it.Spec.Repositories).To(ConsistOf(repo.url + "@id=e2e-only"))
	profiled := builtKit(t, key, camelv1.IntegrationKitPhaseReady)
	g.Expect(profiled.Status.Artifacts).To(ContainElements(HaveField("ID", "org.apache.camel:camel-jackson:jar:4.18.0"),
		HaveField("ID", "dev.caravan.e2e:greeting:jar:1.0")))
	g.Expect(repo.served()).To(ContainElement("/dev/caravan/e2e/greeting/1.0/greeting-1.0.jar"))
	pod := jvmPod(t, key)
	g.Expect(pod.Spec.Containers).To(ConsistOf(HaveField("Name", "ck-integration-global")), "the profile's container name")
	g.Expect(pod.Spec.Containers[0].Resources.Limits.Cpu().String()).To(Equal("300m"), "the profile's CPU limit")

	t.Log("as on Camel K, a second caravan run with a property more rolls the pod, one or two pods all along")
	out, errOut, err = cli(append(run, "-p", "hello=world")...)
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	g.Consistently(func() (int, error) {
		pods, err := podsOf(key)()
		return len(pods), err
	}, 20*time.Second, time.Second).Should(And(BeNumerically(">=", 1), BeNumerically("<=", 2)))
	g.Eventually(integrationLog(cli, "classpath"), timeout, poll).Should(ContainSubstring("hello is world"))
	g.Expect(jvmPod(t, key).UID).NotTo(Equal(pod.UID))

	t.Log("as on Camel K, a change of the profile reaches the integration")
	g.Expect(env.Client.Patch(ctx, profile, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"traits":{"container":{"name":"ck-ipr-new"}}}}`)))).To(Succeed())
	g.Eventually(func() ([]corev1.Pod, error) { return podsOf(key)() }, timeout, poll).Should(ConsistOf(
		HaveField("Spec.Containers", ConsistOf(HaveField("Name", "ck-ipr-new")))))
	g.Expect(env.Client.Delete(ctx, &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "classpath"}})).To(Succeed())
}

// checkACrossNamespacePipe checks Camel K's case of a Pipe whose source is a Kamelet of another
// namespace, which the Pipe's ServiceAccount may read: its JVM runs that Kamelet's route.
func checkACrossNamespacePipe(t *testing.T, cli func(...string) (string, string, error), apps string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	shared := env.Namespace(t)
	t.Log("as on Camel K, a Pipe runs a Kamelet of another namespace that its ServiceAccount may read")
	template := harness.Raw(map[string]any{"from": map[string]any{"uri": "timer:tick", "steps": []any{
		map[string]any{"setBody": map[string]any{"constant": "Kamelet NS " + shared}}, map[string]any{"to": "kamelet:sink"}}}})
	create(t, &camelv1.Kamelet{ObjectMeta: metav1.ObjectMeta{Namespace: shared, Name: "my-timer-source",
		Labels: map[string]string{camelv1.KameletTypeLabel: "source"}}, Spec: camelv1.KameletSpec{Template: &template}})
	create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "my-cross-ns-sa"}})
	create(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: shared, Name: "kamelet-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{camelv1.GroupVersion.Group}, Resources: []string{"kamelets"}, Verbs: []string{"get"}}}})
	create(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: shared, Name: "my-cross-ns-sa"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "kamelet-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: apps, Name: "my-cross-ns-sa"}}})
	p := &camelv1.Pipe{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "pipe-cross-ns", Annotations: map[string]string{camelv1.OperatorIDAnnotation: "jvm"}},
		Spec: camelv1.PipeSpec{ServiceAccountName: "my-cross-ns-sa",
			Source: camelv1.Endpoint{Ref: &corev1.ObjectReference{APIVersion: camelv1.GroupVersion.String(), Kind: "Kamelet", Namespace: shared, Name: "my-timer-source"}},
			Sink:   camelv1.Endpoint{URI: ptr.To("log:bye")}}}
	create(t, p)
	key := client.ObjectKeyFromObject(p)
	g.Expect(jvmPod(t, key).Spec.ServiceAccountName).To(Equal("my-cross-ns-sa"))
	g.Eventually(integrationLog(cli, p.Name), timeout, poll).Should(ContainSubstring("Kamelet NS " + shared))
	g.Expect(env.Client.Delete(ctx, p)).To(Succeed())
}

// checkAPipeWithAnImage checks Camel K's case of a Pipe run by an image of its own, then by a new
// one: the integration's status and its pod name each image in turn, and the annotations follow.
// The images hold what the Deployment of the integration from runs, as Camel K's operator takes them.
func checkAPipeWithAnImage(t *testing.T, cli func(...string) (string, string, error), from client.ObjectKey) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	t.Log("as on Camel K, a Pipe runs the image of its container trait, and then a new one")
	key := client.ObjectKey{Namespace: from.Namespace, Name: "with-image-binding"}
	var previous types.UID
	for i, repository := range []string{"e2e/pipe-image-one", "e2e/pipe-image-two"} {
		img := snapshotImage(t, from, repository)
		out, errOut, err := cli("bind", "timer-source", "log-sink", "-p", "source.message=unused", "-t", "container.image="+img,
			"-t", "jvm.enabled=false", "-t", "kamelets.enabled=false", "-t", "dependencies.enabled=false",
			"--annotation", fmt.Sprintf("test=%d", i+1), "--name", key.Name, "-x", "jvm")
		g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
		g.Eventually(func() (*camelv1.Integration, error) { return getIntegration(key) }, timeout, poll).Should(And(
			HaveField("Annotations", HaveKeyWithValue("test", fmt.Sprint(i+1))), HaveField("Status.Image", img)))
		g.Eventually(podsOf(key), timeout, poll).Should(ConsistOf(And(HaveField("Spec.Containers", ConsistOf(HaveField("Image", img))),
			HaveField("Status.Phase", corev1.PodRunning))))
		pod := jvmPod(t, key)
		g.Expect(pod.UID).NotTo(Equal(previous))
		previous = pod.UID
	}
	g.Eventually(integrationLog(cli, key.Name), timeout, poll).Should(ContainSubstring("Hello from a real JVM"))
	g.Expect(env.Client.Delete(ctx, &camelv1.Pipe{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}})).To(Succeed())
}
