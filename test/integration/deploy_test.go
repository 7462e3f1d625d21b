package integration

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	gomegatypes "github.com/onsi/gomega/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/render"
	"github.com/caravan-dev/caravan/test/harness"
)

// buildComplete matches the status of an integration built and not
// deployed: phase Build Complete, Ready=False with reason BuildComplete,
// and neither Reconciling nor Stalled (kstatus reads it as Current).
func buildComplete(generation int64) gomegatypes.GomegaMatcher {
	return And(
		HaveField("Phase", camelv1.IntegrationPhaseBuildComplete),
		HaveField("ObservedGeneration", generation),
		HaveField("Conditions", And(
			ContainElement(And(HaveField("Type", camelv1.ConditionReady), HaveField("Status", metav1.ConditionFalse),
				HaveField("Reason", "BuildComplete"), HaveField("Message", ContainSubstring("deploy")))),
			Not(ContainElement(HaveField("Type", camelv1.ConditionReconciling))),
			Not(ContainElement(HaveField("Type", camelv1.ConditionStalled))))))
}

// noChildren polls until the integration of key has no Deployment and no
// ConfigMap.
func noChildren(key client.ObjectKey) func() []string {
	return func() []string {
		var left []string
		ctx := context.Background()
		if err := env.Client.Get(ctx, key, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
			left = append(left, "Deployment")
		}
		cm := client.ObjectKey{Namespace: key.Namespace, Name: render.ConfigMapName(key.Name)}
		if err := env.Client.Get(ctx, cm, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			left = append(left, "ConfigMap")
		}
		return left
	}
}

// writePhase writes phase into the integration's status as Camel K's
// clients do: kamel deploy with a merge patch of the status, kamel
// undeploy with an update of it.
func writePhase(t *testing.T, key client.ObjectKey, phase camelv1.IntegrationPhase, update bool) {
	t.Helper()
	ctx := context.Background()
	it := get(t, key, &camelv1.Integration{})
	before := it.DeepCopy()
	it.Status.Phase = phase
	var err error
	if update {
		err = env.Client.Status().Update(ctx, it)
	} else {
		err = env.Client.Status().Patch(ctx, it, client.MergeFrom(before))
	}
	if err != nil {
		t.Fatalf("writing phase %q: %v", phase, err)
	}
}

// TestAnIntegrationThatDoesNotRunAfterItsBuildIsDeployedOnRequest: with
// camel.apache.org/dont-run-after-build=true the integration stops at
// Build Complete without children. The phase writes of Camel K's kamel
// deploy (Deploying) and kamel undeploy (Initialization, from Running),
// and of caravan undeploy (Undeploying), deploy it and take it back to
// Build Complete, its children removed.
func TestAnIntegrationThatDoesNotRunAfterItsBuildIsDeployedOnRequest(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	it := harness.NewIntegration(ns, "held", operatorID, 1)
	it.Annotations[camelv1.DontRunAfterBuildAnnotation] = "true"
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	key := client.ObjectKeyFromObject(it)
	g.Eventually(integrationStatus(key), timeout, poll).Should(buildComplete(it.Generation))
	g.Consistently(noChildren(key), "2s", poll).Should(BeEmpty(), "an integration that does not run after its build has no children")

	t.Log("kamel deploy: the phase Deploying, patched")
	writePhase(t, key, camelv1.IntegrationPhaseDeploying, false)
	g.Eventually(integrationOf(key), timeout, poll).Should(settledDeploying())
	dep := get(t, key, &appsv1.Deployment{})
	dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Replicas: 1, UpdatedReplicas: 1,
		ReadyReplicas: 1, AvailableReplicas: 1}
	g.Expect(env.Client.Status().Update(ctx, dep)).To(Succeed(), "the Deployment rolls out (no controller-manager here)")
	g.Eventually(integrationStatus(key), timeout, poll).Should(HaveField("Phase", camelv1.IntegrationPhaseRunning))

	t.Log("kamel undeploy: the phase Initialization over a Running status, updated")
	writePhase(t, key, camelv1.IntegrationPhaseInitialization, true)
	g.Eventually(integrationStatus(key), timeout, poll).Should(And(buildComplete(it.Generation), HaveField("Replicas", BeNil())))
	g.Eventually(noChildren(key), timeout, poll).Should(BeEmpty())
	g.Consistently(noChildren(key), "2s", poll).Should(BeEmpty(), "the undeployed integration's children came back")

	t.Log("deployed again, then caravan undeploy: the phase Undeploying")
	writePhase(t, key, camelv1.IntegrationPhaseDeploying, false)
	g.Eventually(integrationOf(key), timeout, poll).Should(settledDeploying())
	writePhase(t, key, camelv1.IntegrationPhaseUndeploying, false)
	g.Eventually(integrationStatus(key), timeout, poll).Should(buildComplete(it.Generation))
	g.Eventually(noChildren(key), timeout, poll).Should(BeEmpty())
}

// TestADeployedIntegrationThatDoesNotRunAfterItsBuildStaysDeployed: the
// annotation holds back the first deploy only. An integration that runs
// keeps running when it is annotated, and a phase write that asks for
// nothing (Deploying over a status that is not Build Complete) changes
// nothing.
func TestADeployedIntegrationThatDoesNotRunAfterItsBuildStaysDeployed(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	_, it, key := deploying(t, "kept")
	dep := get(t, key, &appsv1.Deployment{})
	patch := client.MergeFrom(it.DeepCopy())
	it.Annotations[camelv1.DontRunAfterBuildAnnotation] = "true"
	g.Expect(env.Client.Patch(ctx, it, patch)).To(Succeed())
	g.Consistently(integrationOf(key), "2s", poll).Should(settledDeploying())
	g.Expect(get(t, key, &appsv1.Deployment{}).UID).To(Equal(dep.UID))
}

// TestAPipeThatDoesNotRunAfterItsBuildWaitsAtBuildComplete: the Pipe
// passes the annotation on to its Integration, which stops at Build
// Complete; the Pipe says so, Current for kstatus, and kamel deploy of
// the Integration deploys it.
func TestAPipeThatDoesNotRunAfterItsBuildWaitsAtBuildComplete(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	installCatalog(t, ns)
	p := newPipe(ns, "held-pipe", operatorID, timerToLog())
	p.Annotations[camelv1.DontRunAfterBuildAnnotation] = "true"
	g.Expect(env.Client.Create(ctx, p)).To(Succeed())
	key := client.ObjectKeyFromObject(p)
	g.Eventually(integrationStatus(key), timeout, poll).Should(HaveField("Phase", camelv1.IntegrationPhaseBuildComplete))
	g.Eventually(pipeStatus(key), timeout, poll).Should(And(
		HaveField("Phase", camelv1.PipePhaseCreating),
		HaveField("Conditions", And(
			ContainElement(And(HaveField("Type", camelv1.ConditionReady), HaveField("Reason", "BuildComplete"))),
			Not(ContainElement(HaveField("Type", camelv1.ConditionReconciling)))))))
	g.Expect(noChildren(key)()).To(BeEmpty())

	writePhase(t, key, camelv1.IntegrationPhaseDeploying, false)
	g.Eventually(integrationOf(key), timeout, poll).Should(settledDeploying())
	g.Eventually(pipeStatus(key), timeout, poll).Should(settledCreating(p.Generation))
}
