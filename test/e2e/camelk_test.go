package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
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
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	kameletcatalog "github.com/caravan-dev/caravan/config/kamelets"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/render"
	"github.com/caravan-dev/caravan/internal/runtime"
	"github.com/caravan-dev/caravan/test/harness"
)

// camelKID is the operator id Camel K's operator runs with beside Caravan's.
const camelKID = "camel-k"

// snapshotDir is where a snapshot image holds the files that Caravan mounts under /etc/camel.
const snapshotDir = "/opt/route"

// camelKOperator is Camel K's released operator, run as `kamel operator` in a pod of the local
// cluster's process node, as its own image runs it. Its image is the builder image (Java and Maven,
// which its builds run) with Camel K's kamel added.
type camelKOperator struct {
	ns string
}

// Ports of Camel K's operator: pods of the process node share the node's ports, and it listens on
// all addresses.
const camelKHealthPort, camelKMonitoringPort = "28081", "28080"

// camelKRuntime is the Camel K runtime its operator builds kits of: the newest of Camel K 2.10's
// line (3.15) whose Camel Quarkus modules the Maven repository here serves.
const camelKRuntime = "3.15.0"

// startCamelKOperator runs Camel K's operator (camelKID) for namespace ns, with its
// IntegrationPlatform there, until the test ends. It builds kits in its pod (strategy routine),
// with Jib, on the base image of Caravan's kits; its Maven repository is in the cache.
func startCamelKOperator(t *testing.T, ns string) *camelKOperator {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	registry := env.Cluster.RegistryAddress
	create(t, &camelv1.IntegrationPlatform{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: camelKID, Annotations: map[string]string{camelv1.OperatorIDAnnotation: camelKID}},
		Spec: camelv1.IntegrationPlatformSpec{Build: camelv1.IntegrationPlatformBuildSpec{
			Registry: camelv1.RegistrySpec{Address: registry, Insecure: true}, BaseImage: registry + "/" + runtime.BaseImage.Repository,
			RuntimeVersion: camelKRuntime, PublishStrategy: "Jib", BuildConfiguration: rawJSON(`{"strategy":"routine"}`),
			Maven: rawJSON(`{"localRepository":"/m2"}`)}}})
	// Camel K's operator runs with the ClusterRoles its install grants it, and is declared to
	// Caravan's admission policies as docs/migration.md says.
	create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "camel-k-operator"}})
	bindCamelKOperatorRoles(t, ns, "camel-k-operator")
	out, errOut, err := adminCLI(t, ns)("grant", "-x", camelKID, "--as-operator", "--to", "serviceaccount:camel-k-operator")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	t.Cleanup(func() {
		_, _, _ = adminCLI(t, ns)("grant", "-x", camelKID, "--as-operator", "--revoke", "--to", "serviceaccount:camel-k-operator")
	})
	maven := camelKMavenRepository(t, ns)
	envVar := func(name, value string) corev1.EnvVar { return corev1.EnvVar{Name: name, Value: value} }
	labels := map[string]string{"app": "camel-k-operator"}
	create(t, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "camel-k-operator"},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{ServiceAccountName: "camel-k-operator",
					Volumes: []corev1.Volume{{Name: "m2", VolumeSource: corev1.VolumeSource{
						PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: maven.Name}}}},
					Containers: []corev1.Container{{Name: "operator", Image: camelKOperatorImage(t),
						Command: []string{"kamel", "operator", "--leader-election=false",
							"--health-port=" + camelKHealthPort, "--monitoring-port=" + camelKMonitoringPort},
						Env: []corev1.EnvVar{envVar("WATCH_NAMESPACE", ns), envVar("NAMESPACE", ns), envVar("KAMEL_OPERATOR_ID", camelKID),
							envVar("MAVEN_CMD", "/usr/bin/mvn"), envVar("KAMEL_INSTALL_DEFAULT_KAMELETS", "false"), envVar("HOME", "/tmp")},
						VolumeMounts: []corev1.VolumeMount{{Name: "m2", MountPath: "/m2"}}}}}}}})
	op := &camelKOperator{ns: ns}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("Camel K's operator logged:\n%s", op.output())
		}
	})
	t.Log("Camel K's operator makes its platform ready and the CamelCatalog of its runtime")
	g.Eventually(func() error {
		catalogs := &camelv1.CamelCatalogList{}
		if err := env.Client.List(ctx, catalogs, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, c := range catalogs.Items {
			if c.Status.Phase == "Ready" && strings.HasSuffix(c.Name, "-"+camelKRuntime) {
				return nil
			}
		}
		nudgeCamelKPlatform(ctx, ns)
		return fmt.Errorf("no CamelCatalog of runtime %s is ready in %s; Camel K's operator logged:\n%s", camelKRuntime, ns, op.output())
	}, mavenTimeout, poll).Should(Succeed())
	return op
}

// nudgeCamelKPlatform changes the spec of Camel K's platform once it is in Error, which has its
// operator look at it again. Camel K 2.10.1's operator puts the platform in Error when its cache
// does not hold yet the CamelCatalog it has just created, and looks again only when the spec
// changes; the catalog waits for a platform that is Ready, so both would wait for ever. A user
// would edit the platform as this does: it sets the build timeout, which the tests never reach.
func nudgeCamelKPlatform(ctx context.Context, ns string) {
	p := &camelv1.IntegrationPlatform{}
	if env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: camelKID}, p) != nil || p.Status.Phase != camelv1.IntegrationPlatformPhaseError {
		return
	}
	_ = env.Client.Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"build":{"timeout":"30m"}}}`)))
}

// bindCamelKOperatorRoles creates the ClusterRoles of Camel K's release that its install grants its
// operator (once per cluster), and binds them to the ServiceAccount ns/sa until the test ends.
func bindCamelKOperatorRoles(t *testing.T, ns, sa string) {
	t.Helper()
	ctx := context.Background()
	release, err := localcluster.EnsureCamelK(ctx, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(release.OperatorRoles, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("Camel K's operator roles in %s: %v", release.OperatorRoles, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		role := &rbacv1.ClusterRole{}
		if err := yaml.Unmarshal(data, role); err != nil || role.Name == "" {
			t.Fatalf("reading %s: %v", f, err)
		}
		if err := env.Client.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + role.Name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}}}
		create(t, binding)
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), binding) })
	}
}

// movesBackAfterItsReplacement changes the spec of the integration key, which Caravan's operator to
// keeps from Camel K's: to replaces the Deployment with its own. Moved back, to lets go of it, and
// Camel K's operator deploys its own, which adopts the pods and rolls them; the route answers.
func movesBackAfterItsReplacement(t *testing.T, key client.ObjectKey, to string, camelK *camelKOperator) {
	g := NewWithT(t)
	ctx := context.Background()
	t.Log("changed under Caravan, an integration runs on Caravan's own Deployment")
	it, err := getIntegration(key)
	g.Expect(err).NotTo(HaveOccurred())
	patch := `{"spec":{"traits":{"environment":{"vars":["E2E_CHANGED=under-caravan"]}}}}`
	g.Expect(env.Client.Patch(ctx, it, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
	g.Eventually(func() error {
		d, err := getDeployment(key)
		if err != nil || !render.Applied(d) {
			return fmt.Errorf("not replaced by Caravan yet: %v", err)
		}
		return env.RunningUnder(key, to)
	}, timeout, poll).Should(Succeed())
	g.Eventually(answersHTTP(jvmPod(t, key)), timeout, poll).Should(Equal("200 Hello from a real JVM over HTTP"))

	t.Log("moved back, Camel K's operator deploys its own Deployment, which takes the pods over; the route answers")
	out, errOut, err := adminCLI(t, key.Namespace)("reassign", key.Name, "--to", camelKID, "--force")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	g.Eventually(func() error {
		d, err := getDeployment(key)
		switch {
		case err != nil:
			return err
		case render.Applied(d):
			return fmt.Errorf("still Caravan's Deployment")
		case d.Status.UpdatedReplicas != 1 || d.Status.AvailableReplicas != 1:
			return fmt.Errorf("Camel K's Deployment is not rolled out: %+v", d.Status)
		}
		it, err := getIntegration(key)
		if err == nil && it.Status.Phase != camelv1.IntegrationPhaseRunning {
			err = fmt.Errorf("phase %s under Camel K's operator", it.Status.Phase)
		}
		return err
	}, mavenTimeout, poll).Should(Succeed(), func() string { return camelK.output() })
	g.Eventually(answersHTTP(jvmPod(t, key)), timeout, poll).Should(Equal("200 Hello from a real JVM over HTTP"))
}

// rawJSON is a RawObject of the JSON object data.
func rawJSON(data string) *camelv1.RawObject {
	return &camelv1.RawObject{JSON: apiextensionsv1.JSON{Raw: []byte(data)}}
}

// camelKMavenRepository is a claim, in ns, of the directory of the cache that holds the Maven
// repository of Camel K's operator, so that its builds download once, not at every test run.
func camelKMavenRepository(t *testing.T, ns string) *corev1.PersistentVolumeClaim {
	t.Helper()
	cacheDir, err := localcluster.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cacheDir, "camel-k-maven")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil { // any container user writes, as in a claim's volume
		t.Fatal(err)
	}
	size := corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}
	rwo := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "camel-k-maven"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: rwo, StorageClassName: ptr.To(""), VolumeName: ns + "-camel-k-maven",
			Resources: corev1.VolumeResourceRequirements{Requests: size}}}
	volume := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: claim.Spec.VolumeName},
		Spec: corev1.PersistentVolumeSpec{Capacity: size, AccessModes: rwo, StorageClassName: "",
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: claim.Name},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir}}}}
	create(t, volume)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), volume) })
	create(t, claim)
	return claim
}

var camelKImage struct {
	once sync.Once
	ref  string
	err  error
}

// camelKOperatorImage pushes, once per test run, the builder image with Camel K's kamel in
// /usr/local/bin, and returns it by digest.
func camelKOperatorImage(t *testing.T) string {
	t.Helper()
	camelKImage.once.Do(func() {
		release, err := localcluster.EnsureCamelK(context.Background(), os.Stderr)
		if err != nil {
			camelKImage.err = err
			return
		}
		kamel, err := os.ReadFile(release.Kamel)
		if err != nil {
			camelKImage.err = err
			return
		}
		camelKImage.ref, camelKImage.err = pushWithFiles(runtime.BuilderImage.Repository, "e2e/camel-k-operator",
			map[string]tarFile{"/usr/local/bin/kamel": {data: kamel, mode: 0o755}}, nil)
	})
	if camelKImage.err != nil {
		t.Fatalf("making the image of Camel K's operator: %v", camelKImage.err)
	}
	return camelKImage.ref
}

// output is what Camel K's operator logged so far.
func (op *camelKOperator) output() string {
	pods := &corev1.PodList{}
	if err := env.Client.List(context.Background(), pods, client.InNamespace(op.ns), client.MatchingLabels{"app": "camel-k-operator"}); err != nil {
		return err.Error()
	}
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return err.Error()
	}
	var out strings.Builder
	for _, p := range pods.Items {
		log, err := cs.CoreV1().Pods(op.ns).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(context.Background())
		if err != nil {
			fmt.Fprintf(&out, "pod %s: %v\n", p.Name, err)
		}
		out.Write(log)
	}
	return out.String()
}

// errors are the lines Camel K's operator logged at level error, or that name a field a schema
// dropped.
func (op *camelKOperator) errors() []string {
	var lines []string
	output := strings.Split(op.output(), "\n")
	known := camelKPipePanics(output)
	for _, line := range output {
		if strings.Contains(line, `"level":"error"`) || strings.Contains(line, "unknown field") {
			var entry struct {
				ReconcileID string `json:"reconcileID"`
			}
			if json.Unmarshal([]byte(line), &entry) == nil && known[entry.ReconcileID] {
				continue
			}
			lines = append(lines, line)
		}
	}
	return lines
}

// camelKPipePanics are the reconciles in which Camel K v2.10.1's Pipe controller panicked on its
// own error path: when an action fails, it hands a nil Pipe to its event recorder
// (pipe_controller.go, camelevent.NotifyError), so that a transient failure of its own, such as
// the conflict of an update made from a cache that lags its status write, is logged as a panic,
// and retried. A failure that lasts keeps its Pipe from running, which the test sees.
func camelKPipePanics(output []string) map[string]bool {
	known := map[string]bool{}
	for _, line := range output {
		var entry struct {
			Msg, Controller, ReconcileID, Stacktrace string
		}
		if json.Unmarshal([]byte(line), &entry) != nil {
			continue
		}
		if entry.Msg == "Observed a panic" && entry.Controller == "pipe-controller" &&
			strings.Contains(entry.Stacktrace, "pkg/event.NotifyError") && strings.Contains(entry.Stacktrace, "pkg/controller/pipe.(*ReconcilePipe).Reconcile") {
			known[entry.ReconcileID] = true
		}
	}
	return known
}

// snapshotImage pushes an image that runs what the Deployment key's pods run, without the
// cluster: the image of its main container, with the files its ConfigMaps mount and its command,
// arguments and plain environment as the image's own. Camel K's operator runs such an image,
// given with --image (the container trait's image), by its entrypoint.
func snapshotImage(t *testing.T, key client.ObjectKey, repository string) string {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := env.Client.Get(context.Background(), key, d); err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers[0]
	// Camel K's operator mounts files of its own under /etc/camel: the image keeps its own elsewhere.
	moved := strings.NewReplacer(runtime.CamelDir+"/", snapshotDir+"/")
	files := map[string]tarFile{}
	for name, content := range mountedFiles(t, d.Namespace, d.Spec.Template.Spec.Volumes, c.VolumeMounts) {
		files[moved.Replace(name)] = tarFile{data: []byte(moved.Replace(content)), mode: 0o644}
	}
	for i := range c.Args {
		c.Args[i] = moved.Replace(c.Args[i])
	}
	ref, err := pushWithFiles(strings.TrimPrefix(c.Image, env.Cluster.RegistryAddress+"/"), repository, files, func(cfg *v1.Config) {
		cfg.Entrypoint, cfg.Cmd, cfg.WorkingDir = c.Command, c.Args, c.WorkingDir
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				cfg.Env = append(cfg.Env, e.Name+"="+e.Value)
			}
		}
	})
	if err != nil {
		t.Fatalf("pushing the image of Deployment %s: %v", key, err)
	}
	return ref
}

// tarFile is a file of an image layer.
type tarFile struct {
	data []byte
	mode int64
}

// pushWithFiles pushes to repository of the local registry the image base (of that registry)
// with a layer of files and its config changed by config (when not nil), and returns it by digest.
func pushWithFiles(base, repository string, files map[string]tarFile, config func(*v1.Config)) (string, error) {
	ctx := context.Background()
	reg := image.Registry{Address: env.Cluster.RegistryAddress, Insecure: true}
	img, err := image.Pull(ctx, reg, base)
	if err != nil {
		return "", err
	}
	layer, err := tarLayer(files)
	if err != nil {
		return "", err
	}
	if img, err = mutate.Append(img, mutate.Addendum{Layer: layer}); err != nil {
		return "", err
	}
	if config != nil {
		cf, err := img.ConfigFile()
		if err != nil {
			return "", err
		}
		cfg := cf.Config
		config(&cfg)
		if img, err = mutate.Config(img, cfg); err != nil {
			return "", err
		}
	}
	if err := image.Push(ctx, reg, repository+":e2e", img); err != nil {
		return "", err
	}
	digest, err := img.Digest()
	if err != nil {
		return "", err
	}
	return env.Cluster.RegistryAddress + "/" + repository + "@" + digest.String(), nil
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

// tarLayer is a layer of files.
func tarLayer(files map[string]tarFile) (v1.Layer, error) {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f := files[name]
		hdr := &tar.Header{Name: strings.TrimPrefix(name, "/"), Mode: f.mode, Size: int64(len(f.data)), Typeflag: tar.TypeReg}
		if err := w.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := w.Write(f.data); err != nil {
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

// greetingLine is a line of the timer route of testdata/camel/timer.yaml; builtLine one of the
// route whose kit Camel K's operator builds (camelKBuilt).
var (
	greetingLine = regexp.MustCompile(`Hello from a real JVM #(\d+)`)
	builtLine    = regexp.MustCompile(`Built by Camel K #(\d+)`)
)

// counts are the timer counts of the lines of the integration's log that line matches, in order;
// the lines are numbered when line captures no count.
func counts(t *testing.T, cli func(...string) (string, string, error), name string, line *regexp.Regexp) []int {
	t.Helper()
	out, err := integrationLog(cli, name)()
	if err != nil {
		return nil
	}
	var counts []int
	for _, m := range line.FindAllStringSubmatch(out, -1) {
		if len(m) < 2 {
			counts = append(counts, len(counts)+1) // a line without a count: numbered in order
			continue
		}
		if n, err := strconv.Atoi(m[1]); err == nil {
			counts = append(counts, n)
		}
	}
	return counts
}

// camelKBuilt is an Integration for Camel K's operator whose kit it builds: a timer route in the
// YAML DSL, which Camel K runs on Camel Quarkus.
func camelKBuilt(ns, name string) *camelv1.Integration {
	it := &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Annotations: map[string]string{camelv1.OperatorIDAnnotation: camelKID}}}
	it.Spec.Flows = []camelv1.RawObject{harness.Raw(map[string]any{"from": map[string]any{
		"uri": "timer:built", "parameters": map[string]any{"period": "1000", "includeMetadata": true},
		"steps": []any{
			map[string]any{"setBody": map[string]any{"simple": "Built by Camel K #${header.CamelTimerCounter}"}},
			map[string]any{"to": "log:built"}},
	}})}
	return it
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

// pipeLine is a line of the Pipe camelKPipe.
var pipeLine = regexp.MustCompile(`Piped by Camel K`)

// camelKPipe is a Pipe for Camel K's operator, from timer-source to log-sink, whose kit it builds,
// with the Kamelets of Caravan's catalog installed in its namespace for it.
func camelKPipe(t *testing.T, ns, name string) *camelv1.Pipe {
	t.Helper()
	kamelets, err := kameletcatalog.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kamelets {
		if k.Name == "timer-source" || k.Name == "log-sink" {
			k = k.DeepCopy()
			k.Namespace = ns
			k.Annotations = map[string]string{camelv1.OperatorIDAnnotation: camelKID}
			create(t, k)
		}
	}
	p := &camelv1.Pipe{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Annotations: map[string]string{camelv1.OperatorIDAnnotation: camelKID}}}
	properties := harness.Raw(map[string]any{"message": "Piped by Camel K", "period": 1000})
	p.Spec.Source = camelv1.Endpoint{Ref: &corev1.ObjectReference{APIVersion: camelv1.GroupVersion.String(), Kind: "Kamelet", Name: "timer-source"},
		Properties: &properties}
	p.Spec.Sink = camelv1.Endpoint{Ref: &corev1.ObjectReference{APIVersion: camelv1.GroupVersion.String(), Kind: "Kamelet", Name: "log-sink"}}
	return p
}

// checkBesideCamelK runs Camel K's released operator beside Caravan's. It runs, as real JVMs, two
// integrations of an image that holds the routes of the Deployment from (a timer and an HTTP route),
// one whose kit it builds itself (a timer route on Camel Quarkus) and a Pipe, with no error in its log.
// `caravan migrate` moves them to the Caravan operator to in two waves, keeping their JVMs and
// their logs continuous; one moves back to Camel K's operator, with its JVM.
func checkBesideCamelK(t *testing.T, from client.ObjectKey, to string) {
	g := NewWithT(t)
	ctx := context.Background()
	legacy := env.JVMNamespace(t)
	cli := adminCLI(t, legacy)
	camelK := startCamelKOperator(t, legacy)
	img := snapshotImage(t, from, "e2e/camel-k-route")
	lines := map[string]*regexp.Regexp{"ck-first": greetingLine, "ck-second": greetingLine, "ck-built": builtLine}
	lines["ck-pipe"] = pipeLine
	names := []string{"ck-built", "ck-first", "ck-pipe", "ck-second"}
	create(t, camelKBuilt(legacy, "ck-built"))
	create(t, camelKPipe(t, legacy, "ck-pipe"))
	for _, name := range []string{"ck-first", "ck-second"} {
		create(t, camelKIntegration(legacy, name, img))
	}
	pods := map[string]types.UID{}
	for _, name := range names {
		key := client.ObjectKey{Namespace: legacy, Name: name}
		g.Eventually(func() (camelv1.IntegrationPhase, error) {
			it, err := getIntegration(key)
			if err != nil {
				return "", err
			}
			return it.Status.Phase, nil
		}, mavenTimeout, poll).Should(Equal(camelv1.IntegrationPhaseRunning), func() string { return camelK.output() })
		pod := jvmPod(t, key)
		pods[name] = pod.UID
		if lines[name] == greetingLine {
			g.Eventually(answersHTTP(pod), timeout, poll).Should(Equal("200 Hello from a real JVM over HTTP"))
		}
		g.Eventually(func() int { return len(counts(t, cli, name, lines[name])) }, timeout, poll).Should(BeNumerically(">=", 3))
	}
	built, err := getIntegration(client.ObjectKey{Namespace: legacy, Name: "ck-built"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(built.Status.IntegrationKit).NotTo(BeNil(), "Camel K's operator built no kit")
	g.Expect(camelK.errors()).To(BeEmpty(), "Camel K's operator logged errors")

	t.Log("caravan migrate --dry-run says that their pods run on, and that Camel K built one on Camel Quarkus")
	out, errOut, err := cli("migrate", "--from", camelKID, "--to", to, "--dry-run")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	g.Expect(out).To(And(ContainSubstring("integration "+legacy+"/ck-first: camel-k -> "+to+": its pods run on"),
		ContainSubstring("built by its operator on Camel Quarkus (runtime "+camelKRuntime+"): Caravan builds its own kit on camel-main, as its new operator's platform says"),
		ContainSubstring("pipe "+legacy+"/ck-pipe: camel-k -> "+to),
		ContainSubstring("would move 4 resources from camel-k to "+to+" (dry run)")))

	t.Log("caravan migrate moves them in two waves; the same JVMs keep logging, their counts unbroken")
	out, errOut, err = cli("migrate", "--from", camelKID, "--to", to, "--waves", "1,4")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	g.Expect(out).To(And(ContainSubstring("wave 1/2: moving 1 to "+to), ContainSubstring("wave 2/2: moving 3 to "+to)))
	for _, name := range names {
		key := client.ObjectKey{Namespace: legacy, Name: name}
		waitRunningUnder(t, key, to)
		pod := jvmPod(t, key)
		g.Expect(pod.UID).To(Equal(pods[name]), "the move replaced the pod of %s", name)
		g.Expect(pod.Status.ContainerStatuses[0].RestartCount).To(BeZero(), "the move restarted the JVM of %s", name)
		last := counts(t, cli, name, lines[name])
		g.Eventually(func() int { return len(counts(t, cli, name, lines[name])) }, timeout, poll).Should(BeNumerically(">=", len(last)+3),
			"no new lines after the move")
		g.Expect(continuous(counts(t, cli, name, lines[name]))).To(Succeed())
		it, err := getIntegration(key)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(it.Status.Ownership.Kept).NotTo(BeNil())
		g.Expect(it.Status.Ownership.Kept.From).To(Equal(camelKID))
	}

	t.Log("moved back to Camel K's operator, the one it built runs there again, with its JVM")
	back := client.ObjectKey{Namespace: legacy, Name: "ck-built"}
	out, errOut, err = cli("reassign", back.Name, "--to", camelKID, "--force")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	g.Eventually(func() (string, error) {
		d := &appsv1.Deployment{}
		err := env.Client.Get(ctx, back, d)
		return d.Labels[camelv1.OperatorIDLabel], err
	}, timeout, poll).Should(Equal(camelKID))
	g.Consistently(func() types.UID { return jvmPod(t, back).UID }, "5s", poll).Should(Equal(pods[back.Name]))
	g.Expect(continuous(counts(t, cli, back.Name, builtLine))).To(Succeed())

	t.Log("the Pipe moved back, Camel K's operator takes its Integration back, which runs on with its JVM")
	out, errOut, err = cli("reassign", "pipe/ck-pipe", "--to", camelKID, "--force")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	pipeKey := client.ObjectKey{Namespace: legacy, Name: "ck-pipe"}
	g.Eventually(func() (string, error) {
		it, err := getIntegration(pipeKey)
		return it.Annotations[camelv1.OperatorIDAnnotation], err
	}, timeout, poll).Should(Equal(camelKID), func() string { return camelK.output() })
	g.Eventually(func() (string, error) {
		d := &appsv1.Deployment{}
		err := env.Client.Get(ctx, pipeKey, d)
		return d.Labels[camelv1.OperatorIDLabel], err
	}, timeout, poll).Should(Equal(camelKID))
	g.Consistently(func() types.UID { return jvmPod(t, pipeKey).UID }, "5s", poll).Should(Equal(pods[pipeKey.Name]))
	g.Expect(continuous(counts(t, cli, pipeKey.Name, pipeLine))).To(Succeed())
	movesBackAfterItsReplacement(t, client.ObjectKey{Namespace: legacy, Name: "ck-second"}, to, camelK)
	g.Expect(camelK.errors()).To(BeEmpty(), "Camel K's operator logged errors")
	for _, name := range names {
		g.Expect(env.Client.Delete(ctx, &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: legacy, Name: name}})).To(Succeed())
	}
}
