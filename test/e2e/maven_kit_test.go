package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/builder"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/test/harness"
)

// mavenTimeout bounds a kit build with Maven: a cold local repository
// downloads some hundred artifacts.
const mavenTimeout = 6 * time.Minute

// TestAKitHoldsTheJarsMavenResolvedInABuilderPod: with the pod strategy, a
// kit for camel:jackson is built by Maven in a builder pod on the local
// cluster and holds camel-jackson, its transitive jars and the runtime's,
// under /deployments/dependencies on the Java base image; a misspelt
// component ends its Build in Error naming it; no builder pod is left.
func TestAKitHoldsTheJarsMavenResolvedInABuilderPod(t *testing.T) {
	g := NewWithT(t)
	ops, apps := env.Namespace(t), env.Namespace(t)
	op := env.InstallOperator(t, "maven-kits", ops, harness.OperatorOptions{})
	waitReady(t, op)
	patch := `{"spec":{"build":{"buildConfiguration":{"strategy":"pod"}}}}`
	itp := &camelv1.IntegrationPlatform{}
	itp.Namespace, itp.Name = ops, "maven-kits"
	g.Expect(env.Client.Patch(context.Background(), itp, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())

	it := newIntegration(apps, "jackson", "maven-kits", 1)
	delete(it.Spec.Traits, "container")
	it.Spec.Dependencies = []string{"camel:jackson"}
	create(t, it)
	bad := newIntegration(apps, "misspelt", "maven-kits", 1)
	delete(bad.Spec.Traits, "container")
	bad.Spec.Dependencies = []string{"camel:no-such-component"}
	create(t, bad)

	t.Log("the kit holds the jars Maven resolved, on the Java base image")
	kit := builtKit(t, client.ObjectKeyFromObject(it), camelv1.IntegrationKitPhaseReady)
	reg := image.Registry{Address: env.Cluster.RegistryAddress, Insecure: true}
	img, err := image.Pull(context.Background(), reg, kit.Status.Image)
	g.Expect(err).NotTo(HaveOccurred())
	files, err := image.ListFiles(img)
	g.Expect(err).NotTo(HaveOccurred())
	var jars []string
	for f := range files {
		jars = append(jars, strings.TrimPrefix(f, builder.DependenciesDir+"/"))
	}
	slices.Sort(jars)
	for _, prefix := range []string{"org.apache.camel.camel-jackson-4.18.0", "com.fasterxml.jackson.core.jackson-databind-",
		"org.apache.camel.camel-main-4.18.0", "org.apache.camel.camel-yaml-dsl-4.18.0", "org.slf4j.slf4j-simple-"} {
		g.Expect(slices.ContainsFunc(jars, func(j string) bool { return strings.HasPrefix(j, prefix) })).To(BeTrue(),
			"the kit lacks %s*: %v", prefix, jars)
	}
	cfg, err := img.ConfigFile()
	g.Expect(err).NotTo(HaveOccurred())
	var arts []builder.Artifact
	g.Expect(json.Unmarshal([]byte(cfg.Config.Labels[builder.ArtifactsLabel]), &arts)).To(Succeed())
	g.Expect(arts).To(HaveLen(len(jars)), "the image lists other jars than it holds")
	g.Expect(cfg.Config.Env).To(ContainElement(HavePrefix("JAVA_HOME=")), "the kit is not on the Java base image")

	t.Log("a misspelt component ends the build in Error, naming it with Maven's words")
	failed := builtKit(t, client.ObjectKeyFromObject(bad), camelv1.IntegrationKitPhaseError)
	b := &camelv1.Build{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(failed), b)).To(Succeed())
	ready := b.Status.GetCondition(camelv1.ConditionReady)
	g.Expect(b.Status.Phase).To(Equal(camelv1.BuildPhaseError))
	g.Expect(ready.Reason).To(Equal("DependencyUnresolved"))
	g.Expect(ready.Message).To(ContainSubstring("camel:no-such-component is not a component of Camel 4.18.0"))

	t.Log("the builder pods are removed once their builds end")
	g.Eventually(func() ([]corev1.Pod, error) {
		pods := &corev1.PodList{}
		err := env.Client.List(context.Background(), pods, client.InNamespace(ops),
			client.MatchingLabels{"app.kubernetes.io/name": builder.PodLabel})
		return pods.Items, err
	}, timeout, poll).Should(BeEmpty())
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
