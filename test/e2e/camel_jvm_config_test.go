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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
	"software.sslmate.com/src/go-pkcs12"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/pipe"
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
// that an integration mounting a ConfigMap that does not exist yet does not run, and runs
// once the ConfigMap is created, owned by the integration.
func checkALateConfigMap(t *testing.T, cli func(...string) (string, string, error), key client.ObjectKey) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(phaseAndReady(key), timeout, poll).ShouldNot(BeEmpty())
	g.Consistently(phaseAndReady(key), 10*time.Second, poll).ShouldNot(HavePrefix("Running DeploymentReady"))
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
