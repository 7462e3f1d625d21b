package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	gomegatypes "github.com/onsi/gomega/types"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/apply"
	"github.com/caravan-dev/caravan/internal/operator"
	"github.com/caravan-dev/caravan/internal/render"
	camelruntime "github.com/caravan-dev/caravan/internal/runtime"
	"github.com/caravan-dev/caravan/test/harness"
)

const (
	timeout = 30 * time.Second
	poll    = 100 * time.Millisecond
)

func get[T client.Object](t *testing.T, key client.ObjectKey, obj T) T {
	t.Helper()
	if err := env.Client.Get(context.Background(), key, obj); err != nil {
		t.Fatalf("getting %T %s: %v", obj, key, err)
	}
	return obj
}

// last wraps a poll of Eventually so that *seen holds what the last poll
// returned: once the wait is over, the value that satisfied it, which
// the test asserts on rather than on a second read that the operator
// may have moved on from.
func last[T any](poll func() (T, error), seen *T) func() (T, error) {
	return func() (T, error) {
		v, err := poll()
		*seen = v
		return v, err
	}
}

func integrationStatus(key client.ObjectKey) func() (camelv1.IntegrationStatus, error) {
	return func() (camelv1.IntegrationStatus, error) {
		it := &camelv1.Integration{}
		err := env.Client.Get(context.Background(), key, it)
		return it.Status, err
	}
}

func integrationOf(key client.ObjectKey) func() (*camelv1.Integration, error) {
	return func() (*camelv1.Integration, error) {
		it := &camelv1.Integration{}
		return it, env.Client.Get(context.Background(), key, it)
	}
}

// settledDeploying matches an Integration whose status the operator
// computed from its current generation with its Deployment applied:
// phase Deploying and Ready=False with reason DeploymentNotReady. Here,
// where no controller-manager rolls Deployments out, the operator writes
// no further status after it; a first Deploying may come from a
// reconcile that ended before the Deployment (reason Deploying).
func settledDeploying() gomegatypes.GomegaMatcher {
	return WithTransform(func(it *camelv1.Integration) camelv1.IntegrationStatus { return it.Status }, And(
		HaveField("Phase", camelv1.IntegrationPhaseDeploying),
		HaveField("Conditions", ContainElement(And(
			HaveField("Type", camelv1.ConditionReady),
			HaveField("Status", metav1.ConditionFalse),
			HaveField("Reason", "DeploymentNotReady"))))))
}

// deploying creates a one-replica integration called name, for the test
// operator, in a namespace of its own, and waits until it is Deploying
// with its Deployment applied (which never becomes ready here). it is
// the Integration as that wait saw it.
func deploying(t *testing.T, name string) (ns string, it *camelv1.Integration, key client.ObjectKey) {
	t.Helper()
	ns = env.Namespace(t)
	created := harness.NewIntegration(ns, name, operatorID, 1)
	if err := env.Client.Create(context.Background(), created); err != nil {
		t.Fatalf("creating integration %s: %v", name, err)
	}
	key = client.ObjectKeyFromObject(created)
	NewWithT(t).Eventually(last(integrationOf(key), &it), timeout, poll).Should(And(
		settledDeploying(), HaveField("Status.ObservedGeneration", created.Generation)))
	return ns, it, key
}

// TestBadInputGivesAnErrorAUserCanActOn: each kind of bad input leaves
// the integration in phase Error, with Ready=False and Stalled=True whose
// message says what to fix, and no Deployment.
func TestBadInputGivesAnErrorAUserCanActOn(t *testing.T) {
	ns := env.Namespace(t)
	cases := []struct {
		name    string
		mutate  func(*camelv1.Integration)
		reason  string
		message string
	}{
		{name: "an integration with no sources, no flows and no image to run", reason: "NoSources", message: "no sources and no flows",
			mutate: func(it *camelv1.Integration) { it.Spec.Flows, it.Spec.Traits = nil, nil }},
		{name: "a source in an unknown language", reason: "InvalidSource", message: `unknown language "rb"`,
			mutate: func(it *camelv1.Integration) {
				it.Spec.Sources = []camelv1.SourceSpec{{Name: "routes.rb", Content: "from('timer:x')"}}
			}},
		{name: "a container port that is not a number", reason: "InvalidTrait", message: "container.port",
			mutate: func(it *camelv1.Integration) {
				it.Spec.Traits["container"] = harness.Raw(map[string]any{"image": harness.TestImage, "port": "abc"})
			}},
		{name: "an image reference no registry can serve", reason: "InvalidImage",
			message: `trait container.image: invalid image reference "UPPER CASE/with spaces:"`,
			mutate: func(it *camelv1.Integration) {
				it.Spec.Traits["container"] = harness.Raw(map[string]any{"image": "UPPER CASE/with spaces:"})
			}},
		{name: "a dependency no build can resolve", reason: "InvalidDependency",
			message: `spec.dependencies: dependency "camel:a b" contains white space`,
			mutate: func(it *camelv1.Integration) {
				delete(it.Spec.Traits, "container")
				it.Spec.Dependencies = []string{"camel:http", "camel:a b"}
			}},
		{name: "a YAML route of kebab-case keys, which Camel 4 does not read", reason: "InvalidSource",
			message: "reads no kebab-case keys, as Camel 3 and older Camel K documentation wrote them: spec.flows[0]: set-body (write setBody)",
			mutate: func(it *camelv1.Integration) {
				delete(it.Spec.Traits, "container")
				it.Spec.Flows = []camelv1.RawObject{harness.Raw(map[string]any{"from": map[string]any{"uri": "timer:t",
					"steps": []any{map[string]any{"set-body": map[string]any{"constant": "hi"}}}}})}
			}},
		{name: "a Maven repository not in Camel K's form", reason: "InvalidRepository",
			message: `spec.repositories: repository "https://nexus/m2@release": unknown attribute "release"`,
			mutate: func(it *camelv1.Integration) {
				delete(it.Spec.Traits, "container")
				it.Spec.Repositories = []string{"https://nexus/m2@release"}
			}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			it := harness.NewIntegration(ns, fmt.Sprintf("bad-%d", i), operatorID, 1)
			tc.mutate(it)
			g.Expect(env.Client.Create(context.Background(), it)).To(Succeed())
			key := client.ObjectKeyFromObject(it)
			g.Eventually(integrationStatus(key), timeout, poll).Should(And(
				HaveField("Phase", camelv1.IntegrationPhaseError),
				HaveField("Conditions", ContainElement(And(
					HaveField("Type", camelv1.ConditionReady), HaveField("Status", metav1.ConditionFalse),
					HaveField("Reason", tc.reason), HaveField("Message", ContainSubstring(tc.message))))),
				HaveField("Conditions", ContainElement(And(
					HaveField("Type", camelv1.ConditionStalled), HaveField("Status", metav1.ConditionTrue))))))
			err := env.Client.Get(context.Background(), key, &appsv1.Deployment{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "a Deployment was created for bad input")
			kits := &camelv1.IntegrationKitList{}
			g.Expect(env.Client.List(context.Background(), kits, client.InNamespace(ns))).To(Succeed())
			g.Expect(kits.Items).To(BeEmpty(), "a kit was made for bad input")
		})
	}
}

// TestASourcelessIntegrationRunsItsImage: an integration without sources
// and flows runs its pre-built image with the image's own entrypoint and
// no ConfigMap; given flows it gets one, mounted, and loses it again when
// they go.
func TestASourcelessIntegrationRunsItsImage(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	it := harness.NewIntegration(ns, "prebuilt", operatorID, 1)
	it.Spec.Flows = nil
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	key := client.ObjectKeyFromObject(it)
	cmKey := client.ObjectKey{Namespace: ns, Name: render.ConfigMapName(it.Name)}
	noConfigMap := func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, cmKey, &corev1.ConfigMap{})) }

	g.Eventually(integrationOf(key), timeout, poll).Should(And(settledDeploying(),
		HaveField("Status.Image", harness.TestImage)))
	pod := get(t, key, &appsv1.Deployment{}).Spec.Template.Spec
	g.Expect(pod.Containers[0].Image).To(Equal(harness.TestImage))
	g.Expect(pod.Containers[0].Command).To(BeNil(), "the image's own entrypoint runs")
	g.Expect(pod.Volumes).To(BeEmpty())
	g.Expect(noConfigMap()).To(BeTrue(), "a sourceless integration without properties has no ConfigMap")

	t.Log("with flows, the ConfigMap is made and mounted, and the runtime's command runs them")
	flows := `{"spec":{"flows":[{"from":{"uri":"timer:tick","steps":[{"to":"log:info"}]}}]}}`
	g.Expect(env.Client.Patch(ctx, it, client.RawPatch(types.MergePatchType, []byte(flows)))).To(Succeed())
	g.Eventually(func() []string {
		return get(t, key, &appsv1.Deployment{}).Spec.Template.Spec.Containers[0].Command
	}, timeout, poll).Should(Equal(camelruntime.JavaCommand))
	g.Expect(get(t, cmKey, &corev1.ConfigMap{}).Data).To(HaveKey("flows.yaml"))

	t.Log("without them again, the ConfigMap goes")
	g.Expect(env.Client.Patch(ctx, it, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"flows":null}}`)))).To(Succeed())
	g.Eventually(noConfigMap, timeout, poll).Should(BeTrue())
	g.Eventually(func() []corev1.Volume {
		return get(t, key, &appsv1.Deployment{}).Spec.Template.Spec.Volumes
	}, timeout, poll).Should(BeEmpty())
}

// TestChildrenFollowTheRuntimeContract: sources and properties in a
// ConfigMap mounted where the runtime reads them, a Deployment with the
// operator's id, the integration's digest and a rolling strategy that
// never lowers ready pods, a Service only while a port is exposed.
func TestChildrenFollowTheRuntimeContract(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	it := harness.NewIntegration(ns, "contract", operatorID, 2)
	it.Spec.Sources = []camelv1.SourceSpec{{Name: "Greeter.java", Content: "class Greeter {}"}}
	it.Spec.Traits["camel"] = harness.Raw(map[string]any{"properties": []string{"greeting=hello"}})
	it.Spec.Traits["container"] = harness.Raw(map[string]any{"image": harness.TestImage, "port": 8080})
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	key := client.ObjectKeyFromObject(it)

	var seen *camelv1.Integration
	g.Eventually(last(integrationOf(key), &seen), timeout, poll).Should(settledDeploying())
	st := seen.Status
	g.Expect(st.Digest).NotTo(BeEmpty())
	g.Expect(st.Ownership.Owner).To(Equal(operatorID))
	g.Expect(st.Selector).To(Equal("camel.apache.org/integration=contract"))

	cm := get(t, client.ObjectKey{Namespace: ns, Name: "contract-camel"}, &corev1.ConfigMap{})
	g.Expect(cm.Data).To(HaveKeyWithValue("Greeter.java", "class Greeter {}"))
	g.Expect(cm.Data).To(HaveKey("flows.yaml"))
	g.Expect(cm.Data["application.properties"]).To(ContainSubstring("greeting=hello"))
	g.Expect(cm.Labels).To(HaveKeyWithValue(camelv1.OperatorIDLabel, operatorID))

	d := get(t, key, &appsv1.Deployment{})
	g.Expect(metav1.IsControlledBy(d, seen)).To(BeTrue())
	g.Expect(d.Labels).To(HaveKeyWithValue(camelv1.OperatorIDLabel, operatorID))
	g.Expect(*d.Spec.Replicas).To(Equal(int32(2)))
	g.Expect(d.Spec.Selector.MatchLabels).To(Equal(map[string]string{camelv1.IntegrationLabel: "contract"}))
	g.Expect(d.Spec.Strategy.RollingUpdate.MaxUnavailable.IntValue()).To(Equal(0))
	c := d.Spec.Template.Spec.Containers[0]
	g.Expect(c.Image).To(Equal(harness.TestImage))
	vars := map[string]string{}
	for _, e := range c.Env {
		vars[e.Name] = e.Value
	}
	g.Expect(vars).NotTo(HaveKey("CAMEL_OPERATOR_ID"), "the pods do not name their operator: a move must not restart them")
	g.Expect(d.Spec.Template.Labels).To(Equal(map[string]string{camelv1.IntegrationLabel: "contract"}))
	g.Expect(vars).To(HaveKeyWithValue("CAMEL_K_INTEGRATION", "contract"))
	g.Expect(vars).To(HaveKeyWithValue("CAMEL_K_DIGEST", st.Digest))
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	g.Expect(mounts).To(HaveKey("/etc/camel/sources"))
	g.Expect(mounts).To(HaveKey("/etc/camel/application.properties"))

	svc := get(t, key, &corev1.Service{})
	g.Expect(svc.Spec.Selector).To(Equal(map[string]string{camelv1.IntegrationLabel: "contract"}))

	t.Log("without a port the Service goes")
	patch := `{"spec":{"traits":{"container":{"image":"` + harness.TestImage + `","port":null}}}}`
	g.Expect(env.Client.Patch(ctx, it, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, key, &corev1.Service{}))
	}, timeout, poll).Should(BeTrue())
}

// TestScalingDoesNotReinitialise: the scale subresource (kubectl scale)
// changes the Deployment's replicas and not the digest; a trait change
// changes the digest and the pod template.
func TestScalingDoesNotReinitialise(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	_, it, key := deploying(t, "scaled")
	digest := it.Status.Digest

	scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 3}}
	g.Expect(env.Client.SubResource("scale").Update(ctx, it, client.WithSubResourceBody(scale))).To(Succeed())
	g.Eventually(func() int32 {
		d := &appsv1.Deployment{}
		if env.Client.Get(ctx, key, d) != nil {
			return 0
		}
		return *d.Spec.Replicas
	}, timeout, poll).Should(Equal(int32(3)))
	st, _ := integrationStatus(key)()
	g.Expect(st.Digest).To(Equal(digest), "scaling re-initialised the integration")

	patch := `{"spec":{"traits":{"environment":{"vars":["TZ=UTC"]}}}}`
	g.Expect(env.Client.Patch(ctx, it, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
	g.Eventually(func() string { st, _ := integrationStatus(key)(); return st.Digest }, timeout, poll).ShouldNot(Equal(digest))
	g.Eventually(func() []corev1.EnvVar {
		d := &appsv1.Deployment{}
		_ = env.Client.Get(ctx, key, d)
		if len(d.Spec.Template.Spec.Containers) == 0 {
			return nil
		}
		return d.Spec.Template.Spec.Containers[0].Env
	}, timeout, poll).Should(ContainElement(corev1.EnvVar{Name: "TZ", Value: "UTC"}))
}

// TestAnAdoptionRemovesTheChildrenThePreviousOwnerMadeAndThisOneDoesNot:
// the previous owner's children carry its id, out of this operator's
// cache; a Service the previous owner made for a port that went while the
// integration moved is found in the API server and deleted on adoption.
func TestAnAdoptionRemovesTheChildrenThePreviousOwnerMadeAndThisOneDoesNot(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	const gone = "gone-operator"
	it := harness.NewIntegration(ns, "adopted", gone, 1)
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	key := client.ObjectKeyFromObject(it)

	t.Log("the previous owner's Service, labelled with its id, and its release")
	controller := true
	stale := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: it.Name,
		Labels: map[string]string{camelv1.OperatorIDLabel: gone, camelv1.IntegrationLabel: it.Name},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: camelv1.GroupVersion.String(), Kind: "Integration",
			Name: it.Name, UID: it.UID, Controller: &controller}}},
		Spec: corev1.ServiceSpec{Selector: render.Selector(it.Name), Ports: []corev1.ServicePort{{Port: 80}}}}
	g.Expect(env.Client.Create(ctx, stale)).To(Succeed())
	it.Status.Ownership = camelv1.Ownership{Owner: gone, Epoch: 1, ReleasedAt: &metav1.Time{Time: time.Now()}}
	g.Expect(env.Client.Status().Update(ctx, it)).To(Succeed())

	t.Log("assigned to this operator, which adopts it")
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, camelv1.OperatorIDAnnotation, operatorID)
	g.Expect(env.Client.Patch(ctx, it, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
	g.Eventually(integrationStatus(key), timeout, poll).Should(And(
		HaveField("Ownership.Owner", operatorID), HaveField("Ownership.Epoch", int64(2)),
		HaveField("Phase", camelv1.IntegrationPhaseDeploying)))
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, key, &corev1.Service{}))
	}, timeout, poll).Should(BeTrue(), "the previous owner's Service is still there")
}

// TestAnIntegrationThatLeavesForAnOperatorCaravanDoesNotKnowIsLetGo: moved to an id that no
// Caravan operator registered (Camel K's operator, or one not installed yet), an integration is
// released (its last write by this operator) and the operator lets go of what it made, so that an
// operator that labels nothing can apply over it: the Deployment is deleted with its pods orphaned
// (their ReplicaSet runs on), the Service is annotated and labelled with the new id, and the
// ConfigMap, which the running pods mount, stays as it was.
func TestAnIntegrationThatLeavesForAnOperatorCaravanDoesNotKnowIsLetGo(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, it, key := deploying(t, "leaver")
	port := `{"spec":{"traits":{"container":{"port":8080}}}}`
	g.Expect(env.Client.Patch(ctx, it, client.RawPatch(types.MergePatchType, []byte(port)))).To(Succeed())
	g.Eventually(func() error { return env.Client.Get(ctx, key, &corev1.Service{}) }, timeout, poll).Should(Succeed())
	cm := get(t, client.ObjectKey{Namespace: ns, Name: "leaver-camel"}, &corev1.ConfigMap{})

	const to = "nobody-runs-this"
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, camelv1.OperatorIDAnnotation, to)
	g.Expect(env.Client.Patch(ctx, it, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
	released := &camelv1.Integration{}
	g.Eventually(func() bool {
		_ = env.Client.Get(ctx, key, released)
		return released.Status.Ownership.ReleasedAt != nil && released.Labels[camelv1.OperatorIDLabel] == to
	}, timeout, poll).Should(BeTrue(), "the release was not recorded, or the label not handed over")
	g.Expect(released.Status.Ownership.Owner).To(Equal(operatorID))
	// No garbage collector runs here: the orphan policy's finalizer holds the Deployment.
	g.Eventually(func() (bool, error) {
		d := &appsv1.Deployment{}
		err := env.Client.Get(ctx, key, d)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return !d.DeletionTimestamp.IsZero() && slices.Contains(d.Finalizers, metav1.FinalizerOrphanDependents), err
	}, timeout, poll).Should(BeTrue(), "the Deployment was not let go of with its pods orphaned")
	g.Eventually(func() map[string]string { return get(t, key, &corev1.Service{}).Labels }, timeout, poll).
		Should(HaveKeyWithValue(camelv1.OperatorIDLabel, to))
	g.Expect(get(t, key, &corev1.Service{}).Annotations).To(HaveKeyWithValue(camelv1.OperatorIDAnnotation, to))
	g.Consistently(func() (string, error) {
		cur := &corev1.ConfigMap{}
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(cm), cur)
		return cur.ResourceVersion, err
	}, 3*time.Second, 250*time.Millisecond).Should(Equal(cm.ResourceVersion), "the ConfigMap changed after the integration left")
}

// TestChildrenOfAnEarlierVersionAreUpgradedInPlace: a Deployment as an
// earlier Caravan applied it (its owner and applied hash as annotations,
// no hash label) is applied again: the annotations go, the labels come,
// and the pod template stays.
func TestChildrenOfAnEarlierVersionAreUpgradedInPlace(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, _, key := deploying(t, "upgraded")
	current := get(t, key, &appsv1.Deployment{})
	g.Expect(current.Labels).To(HaveKey(render.AppliedHashLabel))

	earlier := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: current.Name, Namespace: ns, OwnerReferences: current.OwnerReferences,
			Labels: map[string]string{camelv1.IntegrationLabel: "upgraded", camelv1.OperatorIDLabel: operatorID},
			Annotations: map[string]string{camelv1.OperatorIDAnnotation: operatorID,
				render.AppliedHashAnnotation: "0123456789abcdef"}},
		Spec: current.Spec}
	cfg, err := apply.Configuration(earlier)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Apply(ctx, cfg, client.FieldOwner(operator.FieldManager), client.ForceOwnership)).To(Succeed())

	g.Eventually(func() (*appsv1.Deployment, error) {
		d := &appsv1.Deployment{}
		return d, env.Client.Get(ctx, key, d)
	}, timeout, poll).Should(And(
		HaveField("Labels", HaveKeyWithValue(render.AppliedHashLabel, current.Labels[render.AppliedHashLabel])),
		HaveField("Annotations", And(Not(HaveKey(camelv1.OperatorIDAnnotation)), Not(HaveKey(render.AppliedHashAnnotation)))),
		HaveField("Spec.Template", Equal(current.Spec.Template)),
	))
}

// TestAnIntegrationInATerminatingNamespaceIsLeftToGo: once its namespace
// is being deleted, an integration whose Deployment went first (the
// namespace controller deletes in no particular order) is neither
// redeployed nor reported Deploying: the API server refuses the apply,
// and the operator writes nothing more.
func TestAnIntegrationInATerminatingNamespaceIsLeftToGo(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, _, key := deploying(t, "going")
	g.Expect(env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	// No namespace controller runs here: the namespace stays Terminating
	// and keeps what it holds until the test deletes it.
	before := get(t, key, &camelv1.Integration{})
	g.Expect(env.Client.Delete(ctx, get(t, key, &appsv1.Deployment{}))).To(Succeed())

	g.Consistently(func() (string, error) {
		now := &camelv1.Integration{}
		err := env.Client.Get(ctx, key, now)
		return now.ResourceVersion, err
	}, 5*time.Second, 250*time.Millisecond).Should(Equal(before.ResourceVersion), "the integration was written")
	err := env.Client.Get(ctx, key, &appsv1.Deployment{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Deployment is back: %v", err)
}

// TestPhaseChangesAreRecordedAsEvents: a phase a user must act on gets an
// Event saying why (transient phases do not: the status shows them).
func TestPhaseChangesAreRecordedAsEvents(t *testing.T) {
	g := NewWithT(t)
	ns := env.Namespace(t)
	it := harness.NewIntegration(ns, "evented", operatorID, 1)
	it.Spec.Flows, it.Spec.Traits = nil, nil // nothing to run
	g.Expect(env.Client.Create(context.Background(), it)).To(Succeed())
	g.Eventually(func() []string {
		events := &eventsv1.EventList{}
		_ = env.Client.List(context.Background(), events, client.InNamespace(ns))
		var notes []string
		for _, e := range events.Items {
			if e.Regarding.Name == "evented" && e.Reason == "IntegrationPhaseUpdated" && e.Type == "Warning" {
				notes = append(notes, e.Note)
			}
		}
		return notes
	}, timeout, poll).Should(ContainElement(And(ContainSubstring(`phase "Error"`), ContainSubstring("no sources and no flows"))))
}

func TestDependenciesThatAnImageRunsWithoutAreAWarning(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	it := harness.NewIntegration(ns, "prebuilt-deps", operatorID, 1)
	it.Spec.Dependencies = []string{"camel:kafka"}
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	key := client.ObjectKeyFromObject(it)

	warnings := warningNotes(ns, it.Name, "DependenciesNotBuilt")
	g.Eventually(warnings, timeout, poll).Should(ConsistOf(And(ContainSubstring(harness.TestImage), ContainSubstring("camel:kafka"))))
	g.Eventually(integrationStatus(key), timeout, poll).Should(HaveField("Phase", camelv1.IntegrationPhaseDeploying),
		"the image runs: the warning does not stop it")
	kits := &camelv1.IntegrationKitList{}
	g.Expect(env.Client.List(ctx, kits, client.InNamespace(ns))).To(Succeed())
	g.Expect(kits.Items).To(BeEmpty(), "no kit is built for an integration with an image")

	t.Log("once per generation: a later reconcile of the same spec (its Deployment deleted and made again) does not warn again")
	dep := get(t, key, &appsv1.Deployment{})
	g.Expect(env.Client.Delete(ctx, dep)).To(Succeed())
	g.Eventually(func() (types.UID, error) {
		again := &appsv1.Deployment{}
		err := env.Client.Get(ctx, key, again)
		return again.UID, err
	}, timeout, poll).ShouldNot(Equal(dep.UID))
	g.Consistently(warnings, time.Second, poll).Should(HaveLen(1))
}

// TestThePlatformIsRecreatedWithItsDefaults deletes the operator's Ready
// platform and waits until the operator has made a new one, Ready with its
// defaults resolved.
func TestThePlatformIsRecreatedWithItsDefaults(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	key := client.ObjectKey{Namespace: operatorNamespace, Name: operatorID}
	platformReady := func() (string, error) {
		itp := &camelv1.IntegrationPlatform{}
		if err := env.Client.Get(ctx, key, itp); err != nil {
			return "", err
		}
		if itp.Status.Phase != camelv1.IntegrationPlatformPhaseReady || itp.Status.Build.BaseImage == "" {
			return "", fmt.Errorf("phase %q, base image %q", itp.Status.Phase, itp.Status.Build.BaseImage)
		}
		return string(itp.UID), nil
	}
	var uid string
	g.Eventually(last(platformReady, &uid), timeout, poll).ShouldNot(BeEmpty())
	itp := get(t, key, &camelv1.IntegrationPlatform{})
	g.Expect(itp.Annotations).To(HaveKeyWithValue(camelv1.OperatorIDAnnotation, operatorID))
	g.Expect(env.Client.Delete(ctx, itp)).To(Succeed())
	g.Eventually(func() string {
		id, _ := platformReady()
		return id
	}, timeout, poll).Should(And(Not(BeEmpty()), Not(Equal(uid))))
	g.Expect(strings.HasPrefix(itp.Name, operatorID)).To(BeTrue())
}

// TestTraitsCaravanDoesNotActOnAreAWarning: the route and jolokia traits, which Caravan keeps and does not act on, a misspelt
// trait and a misspelt property are named in one Warning Event; the integration runs anyway.
func TestTraitsCaravanDoesNotActOnAreAWarning(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	it := harness.NewIntegration(ns, "extra-traits", operatorID, 1)
	it.Spec.Traits["route"] = harness.Raw(map[string]any{"enabled": true})
	it.Spec.Traits["jolokia"] = harness.Raw(map[string]any{"enabled": true})
	it.Spec.Traits["contaner"] = harness.Raw(map[string]any{"port": 8080})
	it.Spec.Traits["health"] = harness.Raw(map[string]any{"livenessProbeEnabld": true})
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())

	g.Eventually(warningNotes(ns, it.Name, "TraitsIgnored"), timeout, poll).Should(ConsistOf(And(ContainSubstring("the Camel K traits jolokia, route are kept but do nothing"),
		ContainSubstring("contaner names no Camel K trait"), ContainSubstring("health.livenessProbeEnabld names no property of Camel K's trait"))))
	g.Eventually(integrationStatus(client.ObjectKeyFromObject(it)), timeout, poll).Should(HaveField("Phase",
		Or(Equal(camelv1.IntegrationPhaseDeploying), Equal(camelv1.IntegrationPhaseRunning))), "the warning does not stop it")
	stored := &camelv1.Integration{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(it), stored)).To(Succeed())
	g.Expect(stored.Spec.Traits).To(HaveKey("route"), "the trait is kept as written")
	g.Expect(stored.Status.Conditions).To(ContainElement(And(HaveField("Type", camelv1.ConditionTraitsIgnored),
		HaveField("Status", metav1.ConditionTrue), HaveField("Reason", "UnknownTraits"),
		HaveField("Message", ContainSubstring("the Camel K traits jolokia, route are kept but do nothing")))))

	t.Log("without the traits Caravan ignores, the condition goes")
	patch := client.MergeFrom(stored.DeepCopy())
	delete(stored.Spec.Traits, "route")
	delete(stored.Spec.Traits, "jolokia")
	delete(stored.Spec.Traits, "contaner")
	delete(stored.Spec.Traits, "health")
	delete(stored.Annotations, camelv1.IntegrationProfileAnnotation)
	g.Expect(env.Client.Patch(ctx, stored, patch)).To(Succeed())
	g.Eventually(integrationStatus(client.ObjectKeyFromObject(it)), timeout, poll).Should(And(
		HaveField("ObservedGeneration", stored.Generation),
		HaveField("Conditions", Not(ContainElement(HaveField("Type", camelv1.ConditionTraitsIgnored))))))
}

// warningNotes polls the notes of the Warning Events with reason about
// the object name of namespace ns.
func warningNotes(ns, name, reason string) func() []string {
	return func() []string {
		events := &eventsv1.EventList{}
		_ = env.Client.List(context.Background(), events, client.InNamespace(ns))
		var notes []string
		for _, e := range events.Items {
			if e.Regarding.Name == name && e.Reason == reason && e.Type == "Warning" {
				notes = append(notes, e.Note)
			}
		}
		return notes
	}
}

// TestAClearedStatusIsInitialisedAgain: `kamel rebuild` empties an
// integration's status; the operator notices and initialises it again,
// to Running, without replacing its Deployment.
func TestAClearedStatusIsInitialisedAgain(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	it := harness.NewIntegration(ns, "rebuilt", operatorID, 1)
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	key := client.ObjectKeyFromObject(it)
	g.Eventually(integrationStatus(key), timeout, poll).Should(HaveField("Phase",
		Or(Equal(camelv1.IntegrationPhaseDeploying), Equal(camelv1.IntegrationPhaseRunning))))
	dep := get(t, key, &appsv1.Deployment{})

	cur := get(t, key, &camelv1.Integration{})
	cur.Status = camelv1.IntegrationStatus{}
	g.Expect(env.Client.Status().Update(ctx, cur)).To(Succeed(), "clearing the status as kamel rebuild does")
	g.Expect(cur.Status.Phase).To(BeEmpty())

	g.Eventually(integrationStatus(key), timeout, poll).Should(And(
		HaveField("Phase", Or(Equal(camelv1.IntegrationPhaseDeploying), Equal(camelv1.IntegrationPhaseRunning))),
		HaveField("ObservedGeneration", cur.Generation), HaveField("Digest", Not(BeEmpty())),
		HaveField("Ownership.Owner", operatorID)))
	g.Expect(get(t, key, &appsv1.Deployment{}).UID).To(Equal(dep.UID), "the Deployment was replaced")
}

// TestThePDBTraitMakesAPodDisruptionBudgetAndRemovesItWhenOff: with the pdb trait the
// integration's pods get a PodDisruptionBudget of its name, controlled by it and labelled
// with the operator's id; without it, the budget goes.
func TestThePDBTraitMakesAPodDisruptionBudgetAndRemovesItWhenOff(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	it := harness.NewIntegration(ns, "budgeted", operatorID, 2)
	it.Spec.Traits["pdb"] = harness.Raw(map[string]any{"enabled": true, "minAvailable": "1"})
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	key := client.ObjectKeyFromObject(it)
	pdb := &policyv1.PodDisruptionBudget{}
	g.Eventually(func() error { return env.Client.Get(ctx, key, pdb) }, timeout, poll).Should(Succeed())
	g.Expect(pdb.Spec.MinAvailable).To(Equal(ptr.To(intstr.FromInt32(1))))
	g.Expect(pdb.Spec.Selector.MatchLabels).To(Equal(map[string]string{camelv1.IntegrationLabel: "budgeted"}))
	g.Expect(pdb.Labels).To(HaveKeyWithValue(camelv1.OperatorIDLabel, operatorID))
	stored := get(t, key, &camelv1.Integration{})
	g.Expect(metav1.IsControlledBy(pdb, stored)).To(BeTrue())

	patch := client.MergeFrom(stored.DeepCopy())
	delete(stored.Spec.Traits, "pdb")
	g.Expect(env.Client.Patch(ctx, stored, patch)).To(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, key, &policyv1.PodDisruptionBudget{})) },
		timeout, poll).Should(BeTrue(), "the budget stays without the trait")
}

// TestTheIngressTraitRoutesToTheServiceAndIsBadInputWithoutOne: with the ingress trait an
// integration that exposes a port gets an Ingress to its Service; one without a port is
// in Error, Stalled, saying what to set; with the trait disabled the Ingress goes.
func TestTheIngressTraitRoutesToTheServiceAndIsBadInputWithoutOne(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	it := harness.NewIntegration(ns, "exposed", operatorID, 1)
	it.Spec.Traits["container"] = harness.Raw(map[string]any{"image": harness.TestImage, "port": 8080})
	it.Spec.Traits["ingress"] = harness.Raw(map[string]any{"enabled": true, "host": "orders.example.com"})
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	key := client.ObjectKeyFromObject(it)
	ing := &networkingv1.Ingress{}
	g.Eventually(func() error { return env.Client.Get(ctx, key, ing) }, timeout, poll).Should(Succeed())
	g.Expect(ing.Spec.Rules[0].Host).To(Equal("orders.example.com"))
	g.Expect(ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name).To(Equal("exposed"))
	g.Expect(ing.Labels).To(HaveKeyWithValue(camelv1.OperatorIDLabel, operatorID))

	setTrait(t, key, "ingress", map[string]any{"enabled": false})
	g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, key, &networkingv1.Ingress{})) },
		timeout, poll).Should(BeTrue(), "the Ingress stays with the trait disabled")

	portless := harness.NewIntegration(ns, "portless", operatorID, 1)
	portless.Spec.Traits["ingress"] = harness.Raw(map[string]any{"enabled": true})
	g.Expect(env.Client.Create(ctx, portless)).To(Succeed())
	g.Eventually(integrationStatus(client.ObjectKeyFromObject(portless)), timeout, poll).Should(And(
		HaveField("Phase", camelv1.IntegrationPhaseError),
		HaveField("Conditions", ContainElement(And(HaveField("Type", camelv1.ConditionStalled),
			HaveField("Reason", "InvalidTrait"), HaveField("Message", ContainSubstring("set container.port, or service.enabled=true")))))))
}

// TestRoutesThatServeHTTPGetAServiceAndAnIngressAsOnCamelK: a platform-http route gets a
// Service to port 8080 and an Ingress to it without any trait; service.auto false takes both away.
func TestRoutesThatServeHTTPGetAServiceAndAnIngressAsOnCamelK(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	it := harness.NewIntegration(ns, "web", operatorID, 1)
	it.Spec.Flows = []camelv1.RawObject{harness.Raw(map[string]any{"from": map[string]any{
		"uri": "platform-http:/hello", "steps": []any{map[string]any{"setBody": map[string]any{"constant": "hi"}}}}})}
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	key := client.ObjectKeyFromObject(it)
	svc := &corev1.Service{}
	g.Eventually(func() error { return env.Client.Get(ctx, key, svc) }, timeout, poll).Should(Succeed())
	g.Expect(svc.Spec.Ports).To(ConsistOf(And(HaveField("Port", int32(80)), HaveField("TargetPort.StrVal", "http"))))
	ing := &networkingv1.Ingress{}
	g.Eventually(func() error { return env.Client.Get(ctx, key, ing) }, timeout, poll).Should(Succeed())
	g.Expect(ing.Spec.Rules[0].HTTP.Paths[0].Path).To(Equal("/"))
	d := &appsv1.Deployment{}
	g.Expect(env.Client.Get(ctx, key, d)).To(Succeed())
	g.Expect(d.Spec.Template.Spec.Containers[0].Ports).To(ConsistOf(HaveField("ContainerPort", int32(8080))))

	setTrait(t, key, "service", map[string]any{"auto": false})
	g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, key, &corev1.Service{})) },
		timeout, poll).Should(BeTrue(), "the Service stays with service.auto false")
	g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, key, &networkingv1.Ingress{})) },
		timeout, poll).Should(BeTrue(), "the Ingress stays without a Service")
}

// TestAContentRefSourceWaitsForItsConfigMapThenIsMountedFromIt: a source given by contentRef makes
// the integration wait, SourceNotFound, until its ConfigMap exists; then the pods mount its key.
func TestAContentRefSourceWaitsForItsConfigMapThenIsMountedFromIt(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	it := harness.NewIntegration(ns, "by-ref", operatorID, 1)
	it.Spec.Flows = nil
	it.Spec.Sources = []camelv1.SourceSpec{{Name: "routes.yaml", ContentRef: "team-routes"}}
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	key := client.ObjectKeyFromObject(it)
	g.Eventually(integrationStatus(key), timeout, poll).Should(HaveField("Conditions", ContainElement(And(
		HaveField("Type", camelv1.ConditionReady), HaveField("Reason", "SourceNotFound"),
		HaveField("Message", ContainSubstring("the key content of the ConfigMap "+ns+"/team-routes"))))))

	g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-routes"},
		Data: map[string]string{"content": "- from:\n    uri: platform-http:/hello\n    steps:\n      - setBody:\n          constant: hi\n"}})).To(Succeed())
	d := &appsv1.Deployment{}
	g.Eventually(func() error { return env.Client.Get(ctx, key, d) }, timeout, poll).Should(Succeed())
	g.Expect(d.Spec.Template.Spec.Volumes).To(ContainElement(HaveField("Projected.Sources", ContainElement(
		HaveField("ConfigMap.Name", "team-routes")))))
	g.Eventually(func() error { return env.Client.Get(ctx, key, &corev1.Service{}) }, timeout, poll).Should(Succeed(),
		"the route read from the ConfigMap serves HTTP, yet gets no Service")
}

// TestAScheduledIntegrationRunsAsACronJobAndBackAsADeployment: as on Camel K, an integration whose
// only consumer is a timer of a minute runs as a CronJob, Ready once made; with cron.enabled false it
// runs as a Deployment again, and the CronJob goes.
func TestAScheduledIntegrationRunsAsACronJobAndBackAsADeployment(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	it := harness.NewIntegration(ns, "nightly", operatorID, 1)
	it.Spec.Flows = []camelv1.RawObject{harness.Raw(map[string]any{"from": map[string]any{
		"uri": "timer:tick", "parameters": map[string]any{"period": 60000}, "steps": []any{map[string]any{"to": "log:tick"}}}})}
	delete(it.Spec.Traits, "container")
	it.Spec.Traits["container"] = harness.Raw(map[string]any{"image": harness.TestImage})
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	key := client.ObjectKeyFromObject(it)
	cj := &batchv1.CronJob{}
	g.Eventually(func() error { return env.Client.Get(ctx, key, cj) }, timeout, poll).Should(Succeed())
	g.Expect(cj.Spec.Schedule).To(Equal("* * * * *"))
	g.Expect(cj.Labels).To(HaveKeyWithValue(camelv1.OperatorIDLabel, operatorID))
	g.Expect(cj.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyNever))
	g.Eventually(integrationStatus(key), timeout, poll).Should(And(HaveField("Phase", camelv1.IntegrationPhaseRunning),
		HaveField("Conditions", ContainElements(And(HaveField("Type", camelv1.ConditionReady), HaveField("Reason", "CronJobCreated")),
			And(HaveField("Type", camelv1.ConditionCronJobAvailable), HaveField("Status", metav1.ConditionTrue),
				HaveField("Reason", "CronJobAvailableReason"), HaveField("Message", "the CronJob nightly runs the integration"))))))
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, key, &appsv1.Deployment{}))).To(BeTrue(), "a Deployment runs beside the CronJob")
	cm := &corev1.ConfigMap{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nightly-camel"}, cm)).To(Succeed())
	g.Expect(cm.Data["application.properties"]).To(ContainSubstring("camel.main.durationMaxMessages=1"))

	setTrait(t, key, "cron", map[string]any{"enabled": false})
	g.Eventually(func() error { return env.Client.Get(ctx, key, &appsv1.Deployment{}) }, timeout, poll).Should(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, key, &batchv1.CronJob{})) },
		timeout, poll).Should(BeTrue(), "the CronJob stays beside the Deployment")
	g.Eventually(integrationStatus(key), timeout, poll).ShouldNot(HaveField("Conditions", ContainElement(
		HaveField("Type", camelv1.ConditionCronJobAvailable))), "a Deployment's integration says CronJobAvailable")
}

// TestHotReloadRollsThePodsWhenAMountedConfigMapChanges: as on Camel K, with mount.hotReload a
// change of a mounted ConfigMap labelled camel.apache.org/integration changes the pod template; a
// ConfigMap without the label and a Secret are named in a warning, and nothing rolls without it.
func TestHotReloadRollsThePodsWhenAMountedConfigMapChanges(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	watched := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-config",
		Labels: map[string]string{camelv1.IntegrationLabel: "hot"}}, Data: map[string]string{"app.properties": "word=one\n"}}
	g.Expect(env.Client.Create(ctx, watched)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"},
		Data: map[string]string{"a.properties": "a=1\n"}})).To(Succeed())
	it := harness.NewIntegration(ns, "hot", operatorID, 1)
	it.Spec.Traits["mount"] = harness.Raw(map[string]any{"hotReload": true,
		"configs": []any{"configmap:app-config", "configmap:plain", "secret:creds"}})
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	key := client.ObjectKeyFromObject(it)
	versions := func() (string, error) {
		d := &appsv1.Deployment{}
		err := env.Client.Get(ctx, key, d)
		return d.Spec.Template.Annotations["caravan.dev/mounted-versions"], err
	}
	g.Eventually(versions, timeout, poll).Should(Equal("ConfigMap/app-config=" + watched.ResourceVersion))
	g.Eventually(warningNotes(ns, it.Name, "HotReloadUnwatched"), timeout, poll).Should(ConsistOf(And(
		ContainSubstring("the ConfigMaps plain are missing or not labelled camel.apache.org/integration"),
		ContainSubstring("the Secrets creds are not watched"))))

	t.Log("a change of the labelled ConfigMap rolls the pods; one of the other does not")
	watched.Data["app.properties"] = "word=two\n"
	g.Expect(env.Client.Update(ctx, watched)).To(Succeed())
	g.Eventually(versions, timeout, poll).Should(Equal("ConfigMap/app-config=" + watched.ResourceVersion))
	before, _ := versions()
	plain := &corev1.ConfigMap{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "plain"}, plain)).To(Succeed())
	plain.Data["a.properties"] = "a=2\n"
	g.Expect(env.Client.Update(ctx, plain)).To(Succeed())
	g.Consistently(versions, 3*time.Second, poll).Should(Equal(before))

	t.Log("without hotReload the pod template follows no version")
	setTrait(t, key, "mount", map[string]any{"configs": []any{"configmap:app-config"}})
	g.Eventually(versions, timeout, poll).Should(BeEmpty())
}

// TestAnIntegrationProfilesTraitsGoBetweenThePlatformsAndTheIntegrations: as on Camel K, an
// integration that names an IntegrationProfile waits for it; once it exists (here in the operator's
// namespace, where Camel K looks after the integration's), its traits apply, under the
// integration's own.
func TestAnIntegrationProfilesTraitsGoBetweenThePlatformsAndTheIntegrations(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	it := harness.NewIntegration(ns, "profiled", operatorID, 1)
	it.Annotations[camelv1.IntegrationProfileAnnotation] = "bounded-" + ns
	it.Spec.Traits["environment"] = harness.Raw(map[string]any{"vars": []any{"FROM=integration"}})
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	key := client.ObjectKeyFromObject(it)
	g.Eventually(integrationStatus(key), timeout, poll).Should(HaveField("Conditions", ContainElement(And(
		HaveField("Type", camelv1.ConditionReady), HaveField("Reason", "ProfileNotFound"),
		HaveField("Message", ContainSubstring("names the IntegrationProfile bounded-"+ns+", which is in neither namespace "+ns))))))

	profile := &camelv1.IntegrationProfile{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: "bounded-" + ns},
		Spec: camelv1.IntegrationProfileSpec{Traits: camelv1.Traits{
			"container":   harness.Raw(map[string]any{"limitMemory": "300Mi"}),
			"environment": harness.Raw(map[string]any{"vars": []any{"FROM=profile", "PROFILE=bounded"}}),
			"jolokia":     harness.Raw(map[string]any{"enabled": true}),
		}, Build: camelv1.IntegrationPlatformBuildSpec{BaseImage: "example.com/base:1"}}}
	g.Expect(env.Client.Create(ctx, profile)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), profile) })
	d := &appsv1.Deployment{}
	g.Eventually(func() error { return env.Client.Get(ctx, key, d) }, timeout, poll).Should(Succeed())
	c := d.Spec.Template.Spec.Containers[0]
	g.Expect(c.Resources.Limits.Memory().String()).To(Equal("300Mi"), "the profile's container trait does not apply")
	g.Expect(c.Env).To(ContainElement(corev1.EnvVar{Name: "FROM", Value: "integration"}), "the integration's own trait does not win")
	g.Eventually(integrationStatus(key), timeout, poll).Should(HaveField("Conditions", ContainElement(And(
		HaveField("Type", camelv1.ConditionTraitsIgnored),
		HaveField("Message", ContainSubstring("from the traits of the IntegrationProfile "+operatorNamespace+"/bounded-"+ns+": the Camel K traits jolokia")),
		HaveField("Message", ContainSubstring("spec.build (but runtimeVersion) are kept but do nothing"))))))

}

// TestAChangedProfileReachesTheIntegrationsThatNameIt: as on Camel K, a change of an
// IntegrationProfile's traits reaches the integrations that name it, without a change of theirs.
// A scheduled integration runs as a CronJob, which nothing else makes the operator look at again.
func TestAChangedProfileReachesTheIntegrationsThatNameIt(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	profile := &camelv1.IntegrationProfile{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bounded"},
		Spec: camelv1.IntegrationProfileSpec{Traits: camelv1.Traits{"container": harness.Raw(map[string]any{"limitMemory": "300Mi"})}}}
	g.Expect(env.Client.Create(ctx, profile)).To(Succeed())
	it := harness.NewIntegration(ns, "nightly", operatorID, 1)
	it.Annotations[camelv1.IntegrationProfileAnnotation] = "bounded"
	it.Spec.Flows = []camelv1.RawObject{harness.Raw(map[string]any{"from": map[string]any{
		"uri": "timer:tick", "parameters": map[string]any{"period": 60000}, "steps": []any{map[string]any{"to": "log:tick"}}}})}
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	key := client.ObjectKeyFromObject(it)
	limit := func() (string, error) {
		cj := &batchv1.CronJob{}
		if err := env.Client.Get(ctx, key, cj); err != nil {
			return "", err
		}
		return cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Resources.Limits.Memory().String(), nil
	}
	g.Eventually(limit, timeout, poll).Should(Equal("300Mi"))
	g.Eventually(integrationStatus(key), timeout, poll).Should(HaveField("Conditions", ContainElement(And(
		HaveField("Type", camelv1.ConditionReady), HaveField("Reason", "CronJobCreated")))))

	g.Expect(env.Client.Patch(ctx, profile, client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"traits":{"container":{"limitMemory":"400Mi"}}}}`)))).To(Succeed())
	g.Eventually(limit, timeout, poll).Should(Equal("400Mi"), "the profile's change did not reach the CronJob")
}

// setTrait sets the trait name of the integration key to value, with a merge patch of what it read.
func setTrait(t *testing.T, key client.ObjectKey, name string, value any) {
	t.Helper()
	stored := get(t, key, &camelv1.Integration{})
	patch := client.MergeFrom(stored.DeepCopy())
	stored.Spec.Traits[name] = harness.Raw(value)
	if err := env.Client.Patch(context.Background(), stored, patch); err != nil {
		t.Fatalf("setting trait %s of %s: %v", name, key, err)
	}
}

// TestAKameletsSourcesAreMountedWithIt: as Camel K's kamelets trait does, a Kamelet's spec.sources
// are mounted with it, and an HTTP route of theirs gets the integration a Service; a source whose
// name the integration's own has is refused, naming the Kamelet.
func TestAKameletsSourcesAreMountedWithIt(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	template := harness.Raw(map[string]any{"from": map[string]any{"uri": "timer:tick", "steps": []any{map[string]any{"to": "kamelet:sink"}}}})
	route := "- from:\n    uri: platform-http:/greet\n    steps:\n      - setBody:\n          constant: hi\n"
	g.Expect(env.Client.Create(ctx, &camelv1.Kamelet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "greeter-source",
		Labels: map[string]string{camelv1.KameletTypeLabel: "source"}}, Spec: camelv1.KameletSpec{Template: &template,
		Sources: []camelv1.SourceSpec{{Name: "greet.yaml", Content: route}}}})).To(Succeed())
	it := harness.NewIntegration(ns, "greeted", operatorID, 1)
	it.Spec.Flows = []camelv1.RawObject{harness.Raw(map[string]any{"from": map[string]any{
		"uri": "kamelet:greeter-source", "steps": []any{map[string]any{"to": "log:greeted"}}}})}
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	key := client.ObjectKeyFromObject(it)
	cm := &corev1.ConfigMap{}
	g.Eventually(func() (map[string]string, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: render.ConfigMapName(it.Name)}, cm)
		return cm.Data, err
	}, timeout, poll).Should(And(HaveKey("greeter-source.kamelet.yaml"), HaveKeyWithValue("greet.yaml", route)))
	g.Eventually(func() error { return env.Client.Get(ctx, key, &corev1.Service{}) }, timeout, poll).Should(Succeed(),
		"the Kamelet's source serves HTTP, yet the integration gets no Service")

	t.Log("a source of the integration with the name of the Kamelet's is refused")
	cur := &camelv1.Integration{}
	g.Expect(env.Client.Get(ctx, key, cur)).To(Succeed())
	cur.Spec.Sources = []camelv1.SourceSpec{{Name: "greet.yaml", Content: "- from:\n    uri: timer:other\n    steps:\n      - to: log:other\n"}}
	g.Expect(env.Client.Update(ctx, cur)).To(Succeed())
	g.Eventually(integrationStatus(key), timeout, poll).Should(HaveField("Conditions", ContainElement(And(
		HaveField("Type", camelv1.ConditionReady), HaveField("Reason", "KameletInvalid"),
		HaveField("Message", ContainSubstring("the Kamelet "+ns+"/greeter-source has a source greet.yaml, the name of another source of the integration"))))))
}
