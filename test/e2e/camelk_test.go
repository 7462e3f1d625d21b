package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/runtime"
	"github.com/caravan-dev/caravan/test/harness"
)

// camelKID is the operator id Camel K's operator runs with beside Caravan's.
const camelKID = "camel-k"

// snapshotDir is where a snapshot image holds the files that Caravan mounts under /etc/camel.
const snapshotDir = "/opt/route"

// camelKOperator is Camel K's released operator, run as a process against the local cluster, as
// `kamel operator` runs it in its pod.
type camelKOperator struct {
	cmd *exec.Cmd
	mu  sync.Mutex
	log bytes.Buffer
}

// startCamelKOperator runs Camel K's operator (camelKID) for namespace ns, with its
// IntegrationPlatform there, until the test ends.
func startCamelKOperator(t *testing.T, ns string) *camelKOperator {
	t.Helper()
	release, err := localcluster.EnsureCamelK(context.Background(), os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	// Camel K's operator needs a platform with a registry, also when no integration builds, and
	// a Maven repository that exists, where it would look for catalogs it lacks.
	platform := &camelv1.IntegrationPlatform{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: camelKID, Annotations: map[string]string{camelv1.OperatorIDAnnotation: camelKID}},
		Spec: camelv1.IntegrationPlatformSpec{Build: camelv1.IntegrationPlatformBuildSpec{
			Registry: camelv1.RegistrySpec{Address: env.Cluster.RegistryAddress, Insecure: true},
			Maven:    &camelv1.RawObject{JSON: apiextensionsv1.JSON{Raw: []byte(`{"localRepository":` + strconv.Quote(t.TempDir()) + `}`)}}}}}
	create(t, platform)
	op := &camelKOperator{cmd: exec.Command(release.Kamel, "operator", "--leader-election=false", "--health-port=0", "--monitoring-port=0")}
	op.cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig(t, "camel-k-operator", "system:masters"),
		"WATCH_NAMESPACE="+ns, "NAMESPACE="+ns, "KAMEL_OPERATOR_ID="+camelKID, "KAMEL_INSTALL_DEFAULT_KAMELETS=false")
	op.cmd.Stdout, op.cmd.Stderr = lockedWriter{&op.mu, &op.log}, lockedWriter{&op.mu, &op.log}
	if err := op.cmd.Start(); err != nil {
		t.Fatalf("starting Camel K's operator: %v", err)
	}
	t.Cleanup(func() {
		_ = op.cmd.Process.Kill()
		_ = op.cmd.Wait()
		if t.Failed() {
			t.Logf("Camel K's operator logged:\n%s", op.output())
		}
	})
	t.Log("Camel K's operator makes its platform ready and the CamelCatalog of its runtime")
	NewWithT(t).Eventually(func() error {
		catalogs := &camelv1.CamelCatalogList{}
		if err := env.Client.List(context.Background(), catalogs, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, c := range catalogs.Items {
			if c.Status.Phase == "Ready" {
				return nil
			}
		}
		return fmt.Errorf("no CamelCatalog is ready in %s; Camel K's operator logged:\n%s", ns, op.output())
	}, timeout, poll).Should(Succeed())
	return op
}

func (op *camelKOperator) output() string { op.mu.Lock(); defer op.mu.Unlock(); return op.log.String() }

// errors are the lines Camel K's operator logged at level error, or that name a field a schema
// dropped.
func (op *camelKOperator) errors() []string {
	var lines []string
	for _, line := range strings.Split(op.output(), "\n") {
		if strings.Contains(line, `"level":"error"`) || strings.Contains(line, "unknown field") {
			lines = append(lines, line)
		}
	}
	return lines
}

// snapshotImage pushes an image that runs what the Deployment key's pods run, without the
// cluster: the image of its main container, with the files its ConfigMaps mount and its command,
// arguments and plain environment as the image's own. Camel K's operator runs such an image,
// given with --image (the container trait's image), by its entrypoint.
func snapshotImage(t *testing.T, key client.ObjectKey, repository string) string {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	d := &appsv1.Deployment{}
	g.Expect(env.Client.Get(ctx, key, d)).To(Succeed())
	c := d.Spec.Template.Spec.Containers[0]
	// Camel K's operator mounts files of its own under /etc/camel: the image keeps its own elsewhere.
	moved := strings.NewReplacer(runtime.CamelDir+"/", snapshotDir+"/")
	files := map[string]string{}
	for name, content := range mountedFiles(t, d.Namespace, d.Spec.Template.Spec.Volumes, c.VolumeMounts) {
		files[moved.Replace(name)] = moved.Replace(content)
	}
	for i := range c.Args {
		c.Args[i] = moved.Replace(c.Args[i])
	}
	reg := image.Registry{Address: env.Cluster.RegistryAddress, Insecure: true}
	base, err := image.Pull(ctx, reg, c.Image)
	g.Expect(err).NotTo(HaveOccurred())
	layer, err := tarLayer(files)
	g.Expect(err).NotTo(HaveOccurred())
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer})
	g.Expect(err).NotTo(HaveOccurred())
	cf, err := img.ConfigFile()
	g.Expect(err).NotTo(HaveOccurred())
	cfg := cf.Config
	cfg.Entrypoint, cfg.Cmd, cfg.WorkingDir = c.Command, c.Args, c.WorkingDir
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			cfg.Env = append(cfg.Env, e.Name+"="+e.Value)
		}
	}
	img, err = mutate.Config(img, cfg)
	g.Expect(err).NotTo(HaveOccurred())
	ref := env.Cluster.RegistryAddress + "/" + repository + ":snapshot"
	g.Expect(image.Push(ctx, reg, ref, img)).To(Succeed())
	digest, err := img.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	return env.Cluster.RegistryAddress + "/" + repository + "@" + digest.String()
}

// mountedFiles are the files the ConfigMap volumes of mounts hold, by the path the container
// sees them at.
func mountedFiles(t *testing.T, ns string, volumes []corev1.Volume, mounts []corev1.VolumeMount) map[string]string {
	t.Helper()
	type source struct {
		configMap string
		items     []corev1.KeyToPath
	}
	files := map[string]string{}
	for _, m := range mounts {
		var sources []source
		for _, v := range volumes {
			switch {
			case v.Name != m.Name:
			case v.ConfigMap != nil:
				sources = append(sources, source{v.ConfigMap.Name, v.ConfigMap.Items})
			case v.Projected != nil:
				for _, p := range v.Projected.Sources {
					if p.ConfigMap != nil {
						sources = append(sources, source{p.ConfigMap.Name, p.ConfigMap.Items})
					}
				}
			default:
				t.Fatalf("volume %s is not of ConfigMaps: an image cannot hold it", v.Name)
			}
		}
		for _, s := range sources {
			cm := &corev1.ConfigMap{}
			if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: s.configMap}, cm); err != nil {
				t.Fatal(err)
			}
			items := s.items
			if len(items) == 0 {
				for k := range cm.Data {
					items = append(items, corev1.KeyToPath{Key: k, Path: k})
				}
			}
			for _, item := range items {
				switch {
				case m.SubPath == "":
					files[path.Join(m.MountPath, item.Path)] = cm.Data[item.Key]
				case m.SubPath == item.Path:
					files[m.MountPath] = cm.Data[item.Key]
				}
			}
		}
	}
	return files
}

// tarLayer is a layer of files, readable by all.
func tarLayer(files map[string]string) (v1.Layer, error) {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		hdr := &tar.Header{Name: strings.TrimPrefix(name, "/"), Mode: 0o644, Size: int64(len(files[name])), Typeflag: tar.TypeReg}
		if err := w.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := w.Write([]byte(files[name])); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
}

// camelKIntegration is an Integration for Camel K's operator that runs image by its entrypoint,
// as `kamel run --image` makes it. Its pod is told its address (POD_IP, which the runtime listens
// on) through the pod template Camel K's pod trait merges.
func camelKIntegration(ns, name, image string) *camelv1.Integration {
	it := &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Annotations: map[string]string{camelv1.OperatorIDAnnotation: camelKID}}}
	it.Spec.Traits = camelv1.Traits{"container": harness.Raw(map[string]any{"image": image})}
	template := harness.Raw(map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
		"name": "integration",
		"env":  []any{map[string]any{"name": "POD_IP", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "status.podIP"}}}},
	}}}})
	it.Spec.Template = &template
	return it
}

// greetingLine is a line of the timer route of testdata/camel/timer.yaml.
var greetingLine = regexp.MustCompile(`Hello from a real JVM #(\d+)`)

// greetings are the counts of the timer's lines in the log of the integration's pod, in order.
func greetings(t *testing.T, cli func(...string) (string, string, error), name string) []int {
	t.Helper()
	out, err := integrationLog(cli, name)()
	if err != nil {
		return nil
	}
	var counts []int
	for _, m := range greetingLine.FindAllStringSubmatch(out, -1) {
		if n, err := strconv.Atoi(m[1]); err == nil {
			counts = append(counts, n)
		}
	}
	return counts
}

// continuous fails unless counts go up by one from line to line: no line lost, no restart.
func continuous(counts []int) error {
	for i := 1; i < len(counts); i++ {
		if counts[i] != counts[i-1]+1 {
			return fmt.Errorf("the timer's count went from %d to %d", counts[i-1], counts[i])
		}
	}
	return nil
}

// answersHTTP is the answer of the pod's HTTP route /hello.
func answersHTTP(pod corev1.Pod) func() (string, error) {
	return func() (string, error) {
		resp, err := http.Get("http://" + net.JoinHostPort(pod.Status.PodIP, "8080") + "/hello")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, body), err
	}
}

// checkBesideCamelK runs Camel K's released operator beside Caravan's: it runs two integrations
// of an image that holds the routes of the Deployment from (a timer and an HTTP route) as real
// JVMs, with no error in its log; `caravan migrate` moves them to the Caravan operator to in two
// waves, keeping their JVMs and their logs continuous; and one moves back to Camel K's operator,
// with its JVM.
func checkBesideCamelK(t *testing.T, from client.ObjectKey, to string) {
	g := NewWithT(t)
	ctx := context.Background()
	legacy := env.JVMNamespace(t)
	cli := adminCLI(t, legacy)
	camelK := startCamelKOperator(t, legacy)
	img := snapshotImage(t, from, "e2e/camel-k-route")
	names := []string{"ck-first", "ck-second"}
	pods := map[string]types.UID{}
	for _, name := range names {
		create(t, camelKIntegration(legacy, name, img))
	}
	for _, name := range names {
		key := client.ObjectKey{Namespace: legacy, Name: name}
		pod := jvmPod(t, key)
		pods[name] = pod.UID
		g.Eventually(answersHTTP(pod), timeout, poll).Should(Equal("200 Hello from a real JVM over HTTP"))
		g.Eventually(func() (camelv1.IntegrationPhase, error) {
			it, err := getIntegration(key)
			if err != nil {
				return "", err
			}
			return it.Status.Phase, nil
		}, timeout, poll).Should(Equal(camelv1.IntegrationPhaseRunning))
		g.Eventually(func() int { return len(greetings(t, cli, name)) }, timeout, poll).Should(BeNumerically(">=", 3))
	}
	g.Expect(camelK.errors()).To(BeEmpty(), "Camel K's operator logged errors")

	t.Log("caravan migrate --dry-run says that their pods run on")
	out, errOut, err := cli("migrate", "--from", camelKID, "--to", to, "--dry-run")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	g.Expect(out).To(And(ContainSubstring("integration "+legacy+"/ck-first: camel-k -> "+to+": its pods run on"),
		ContainSubstring("would move 2 resources from camel-k to "+to+" (dry run); 0 with differences")))

	t.Log("caravan migrate moves them in two waves; the same JVMs keep logging, their counts unbroken")
	out, errOut, err = cli("migrate", "--from", camelKID, "--to", to, "--waves", "1,2")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	g.Expect(out).To(And(ContainSubstring("wave 1/2: moving 1 to "+to), ContainSubstring("wave 2/2: moving 1 to "+to)))
	for _, name := range names {
		key := client.ObjectKey{Namespace: legacy, Name: name}
		waitRunningUnder(t, key, to)
		pod := jvmPod(t, key)
		g.Expect(pod.UID).To(Equal(pods[name]), "the move replaced the pod of %s", name)
		g.Expect(pod.Status.ContainerStatuses[0].RestartCount).To(BeZero(), "the move restarted the JVM of %s", name)
		last := greetings(t, cli, name)
		g.Eventually(func() int { return len(greetings(t, cli, name)) }, timeout, poll).Should(BeNumerically(">=", len(last)+3),
			"no new lines after the move")
		g.Expect(continuous(greetings(t, cli, name))).To(Succeed())
		it, err := getIntegration(key)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(it.Status.Ownership.Kept).NotTo(BeNil())
		g.Expect(it.Status.Ownership.Kept.From).To(Equal(camelKID))
	}

	t.Log("moved back to Camel K's operator, the first runs there again, with its JVM")
	first := client.ObjectKey{Namespace: legacy, Name: names[0]}
	out, errOut, err = cli("reassign", names[0], "--to", camelKID, "--force")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	g.Eventually(func() (string, error) {
		d := &appsv1.Deployment{}
		err := env.Client.Get(ctx, first, d)
		return d.Labels[camelv1.OperatorIDLabel], err
	}, timeout, poll).Should(Equal(camelKID))
	g.Expect(jvmPod(t, first).UID).To(Equal(pods[names[0]]))
	g.Expect(continuous(greetings(t, cli, names[0]))).To(Succeed())
	g.Expect(camelK.errors()).To(BeEmpty(), "Camel K's operator logged errors")
	for _, name := range names {
		g.Expect(env.Client.Delete(ctx, &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: legacy, Name: name}})).To(Succeed())
	}
}
