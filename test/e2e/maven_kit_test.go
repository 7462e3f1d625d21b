package e2e

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/builderpod"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/publish"
	camelruntime "github.com/caravan-dev/caravan/internal/runtime"
	"github.com/caravan-dev/caravan/test/harness"
)

// mavenTimeout bounds a kit build with Maven: a cold local repository
// downloads some hundred artifacts.
const mavenTimeout = 6 * time.Minute

// TestAKitHoldsTheJarsMavenResolvedInABuilderPod: with the pod strategy and
// a Maven cache, a kit for camel:jackson is built by Maven in a builder pod
// on the local cluster, on the runtime's kit: it adds one layer of the jars
// that kit lacks, and lists every jar in its status. The same set built again
// in another namespace downloads nothing; built by another operator, it is that
// operator's own kit, built in its own namespace and pushed to its own image. A
// modeline's dependency of a Java source given to caravan run is in its kit. A
// misspelt component ends its Build in Error naming it; no builder pod is left.
func TestAKitHoldsTheJarsMavenResolvedInABuilderPod(t *testing.T) {
	g := NewWithT(t)
	ops, apps, others := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	op := env.InstallOperator(t, "maven-kits", ops, harness.OperatorOptions{BuildStrategy: build.StrategyPod,
		MavenCache: ptr.To(resource.MustParse("1Gi"))})
	waitReady(t, op)
	itp := &camelv1.IntegrationPlatform{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ops, Name: "maven-kits"}, itp)).To(Succeed())
	g.Expect(string(itp.Spec.Build.Maven.Raw)).To(ContainSubstring(`"cacheVolumeClaim":"maven-kits-operator-maven"`))
	reg := image.Registry{Address: env.Cluster.RegistryAddress, Insecure: true}

	t.Log("the runtime's kit is built cold: Maven downloads into the cache")
	runtime := mavenIntegration(t, apps, "runtime")
	runtimeKit := builtKit(t, client.ObjectKeyFromObject(runtime), camelv1.IntegrationKitPhaseReady)
	t.Log(buildOf(t, runtimeKit).Status.GetCondition(camelv1.ConditionReady).Message)
	g.Expect(buildOf(t, runtimeKit).Status.GetCondition(camelv1.ConditionReady).Message).To(
		MatchRegexp(`on the base image; Maven downloaded [1-9][0-9]+ files`))

	t.Log("a kit with one more dependency adds one layer to the runtime's kit")
	it := mavenIntegration(t, apps, "jackson", "camel:jackson")
	kit := builtKit(t, client.ObjectKeyFromObject(it), camelv1.IntegrationKitPhaseReady)
	g.Expect(buildOf(t, kit).Status.GetCondition(camelv1.ConditionReady).Message).To(
		ContainSubstring("in a new layer on kit " + runtimeKit.Name))
	parentImg, err := image.Pull(context.Background(), reg, runtimeKit.Status.Image)
	g.Expect(err).NotTo(HaveOccurred())
	img, err := image.Pull(context.Background(), reg, kit.Status.Image)
	g.Expect(err).NotTo(HaveOccurred())
	parentLayers, layers := layerDigests(t, parentImg), layerDigests(t, img)
	g.Expect(layers).To(HaveLen(len(parentLayers)+1), "the kit does not add one layer to its parent's")
	g.Expect(layers[:len(parentLayers)]).To(Equal(parentLayers), "the kit does not reuse its parent's layers")

	t.Log("the kit holds the jars Maven resolved, on the Java base image, and its status lists them")
	jars := kitJars(t, img)
	g.Expect(jars).NotTo(ContainElement(ContainSubstring("jackson-core-2.16")), "a jar the new layer replaces is still there")
	for _, prefix := range []string{"org.apache.camel.camel-jackson-4.18.0", "com.fasterxml.jackson.core.jackson-databind-",
		"org.apache.camel.camel-main-4.18.0", "org.apache.camel.camel-yaml-dsl-4.18.0", "org.slf4j.slf4j-simple-"} {
		g.Expect(slices.ContainsFunc(jars, func(j string) bool { return strings.HasPrefix(j, prefix) })).To(BeTrue(),
			"the kit lacks %s*: %v", prefix, jars)
	}
	arts, err := publish.ImageArtifacts(img)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(arts).To(HaveLen(len(jars)), "the image lists other jars than it holds")
	g.Expect(kit.Status.Artifacts).To(HaveLen(len(jars)), "the kit's status lists other jars than it holds")
	g.Expect(kit.Status.Artifacts).To(ContainElement(And(
		HaveField("ID", HavePrefix("org.apache.camel:camel-jackson:jar:4.18.0")),
		HaveField("Checksum", HavePrefix("sha256:")),
		HaveField("Target", HavePrefix(camelruntime.DependenciesDir+"/")))))
	cfg, err := img.ConfigFile()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Config.Env).To(ContainElement(HavePrefix("JAVA_HOME=")), "the kit is not on the Java base image")

	t.Log("the same set built in another namespace downloads nothing: the cache holds it")
	again := mavenIntegration(t, others, "jackson", "camel:jackson")
	againKit := builtKit(t, client.ObjectKeyFromObject(again), camelv1.IntegrationKitPhaseReady)
	t.Log(buildOf(t, againKit).Status.GetCondition(camelv1.ConditionReady).Message)
	g.Expect(buildOf(t, againKit).Status.GetCondition(camelv1.ConditionReady).Message).To(
		ContainSubstring("Maven downloaded 0 files (0 bytes)"))

	t.Log("another operator builds the same set: its own kit, by a builder pod in its own namespace, pushed to its own image")
	opsB, appsB := env.Namespace(t), env.Namespace(t)
	waitReady(t, env.InstallOperator(t, "maven-kits-b", opsB, harness.OperatorOptions{BuildStrategy: build.StrategyPod}))
	itB := newIntegration(appsB, "jackson", "maven-kits-b", 1)
	delete(itB.Spec.Traits, "container")
	itB.Spec.Dependencies = []string{"camel:jackson"}
	create(t, itB)
	builders := map[string]string{} // builder pod name to the operator its label names, for each namespace seen
	kitB := waitKit(t, client.ObjectKeyFromObject(itB), mavenTimeout, func(k *camelv1.IntegrationKit) error {
		for _, ns := range []string{ops, opsB} {
			pods := &corev1.PodList{}
			if err := env.Client.List(context.Background(), pods, client.InNamespace(ns),
				client.MatchingLabels{"app.kubernetes.io/name": builderpod.PodLabel}); err != nil {
				return err
			}
			for _, p := range pods.Items {
				builders[ns+"/"+p.Name] = p.Labels[camelv1.OperatorIDLabel]
			}
		}
		if k.Status.Phase != camelv1.IntegrationKitPhaseReady {
			return errorf("kit %s in phase %q", k.Name, k.Status.Phase)
		}
		return nil
	})
	g.Expect(kitB.Namespace).To(Equal(appsB))
	g.Expect(kitB.Name).NotTo(Equal(againKit.Name), "two operators share a kit name")
	g.Expect(kitB.Annotations).To(HaveKeyWithValue(camelv1.OperatorIDAnnotation, "maven-kits-b"))
	g.Expect(repositoryOf(kitB.Status.Image)).NotTo(Equal(repositoryOf(againKit.Status.Image)))
	g.Expect(builders).NotTo(BeEmpty(), "no builder pod of the second operator was seen")
	for pod, id := range builders {
		g.Expect(pod).To(HavePrefix(opsB+"/"), "a builder pod of the first operator ran while only the second built")
		g.Expect(id).To(Equal("maven-kits-b"))
	}
	imgB, err := image.Pull(context.Background(), reg, kitB.Status.Image)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(kitJars(t, imgB)).To(Equal(jars), "the same set made other jars")

	t.Log("the modeline of a Java source run by caravan run puts its dependency in the kit")
	out, errOut, err := adminCLI(t, apps)("run", path.Join("testdata", "camel", "Lang3.java"), "-x", "maven-kits")
	g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	langKit := builtKit(t, client.ObjectKey{Namespace: apps, Name: "lang3"}, camelv1.IntegrationKitPhaseReady)
	g.Expect(langKit.Status.Artifacts).To(ContainElement(HaveField("ID", "org.apache.commons:commons-lang3:jar:3.17.0")))

	t.Log("a misspelt component ends the build in Error, naming it with Maven's words")
	bad := mavenIntegration(t, apps, "misspelt", "camel:no-such-component")
	b := buildOf(t, builtKit(t, client.ObjectKeyFromObject(bad), camelv1.IntegrationKitPhaseError))
	ready := b.Status.GetCondition(camelv1.ConditionReady)
	g.Expect(b.Status.Phase).To(Equal(camelv1.BuildPhaseError))
	g.Expect(ready.Reason).To(Equal("DependencyUnresolved"))
	g.Expect(ready.Message).To(ContainSubstring("camel:no-such-component is not a component of Camel 4.18.0"))

	t.Log("the builder pods are removed once their builds end")
	g.Eventually(func() ([]corev1.Pod, error) {
		pods := &corev1.PodList{}
		err := env.Client.List(context.Background(), pods, client.InNamespace(ops),
			client.MatchingLabels{"app.kubernetes.io/name": builderpod.PodLabel})
		return pods.Items, err
	}, timeout, poll).Should(BeEmpty())
}

// mavenIntegration creates an integration of operator maven-kits that runs on a kit of deps.
func mavenIntegration(t *testing.T, namespace, name string, deps ...string) *camelv1.Integration {
	it := newIntegration(namespace, name, "maven-kits", 1)
	delete(it.Spec.Traits, "container")
	it.Spec.Dependencies = deps
	create(t, it)
	return it
}

// repositoryOf is an image reference without its tag or digest.
func repositoryOf(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

// buildOf reads the Build of a kit (they share a name).
func buildOf(t *testing.T, k *camelv1.IntegrationKit) *camelv1.Build {
	t.Helper()
	b := &camelv1.Build{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(k), b); err != nil {
		t.Fatal(err)
	}
	return b
}

// kitJars are the names of the jars under camelruntime.DependenciesDir in an
// image's file system, its layers' whiteouts applied.
func kitJars(t *testing.T, img v1.Image) []string {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	var jars []string
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		dir, name := path.Split(path.Join("/", hdr.Name))
		if hdr.Typeflag == tar.TypeReg && dir == camelruntime.DependenciesDir+"/" {
			jars = append(jars, name)
		}
	}
	slices.Sort(jars)
	return jars
}

// layerDigests are an image's layer digests, base first.
func layerDigests(t *testing.T, img v1.Image) []string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d.String())
	}
	return out
}

// builtKit waits for the kit that the integration's status names to reach phase.
func builtKit(t *testing.T, key client.ObjectKey, phase camelv1.IntegrationKitPhase) *camelv1.IntegrationKit {
	t.Helper()
	return waitKit(t, key, mavenTimeout, func(k *camelv1.IntegrationKit) error {
		if k.Status.Phase != phase {
			return errorf("kit %s in phase %q, not %q", k.Name, k.Status.Phase, phase)
		}
		return nil
	})
}
