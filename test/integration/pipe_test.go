package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	gomegatypes "github.com/onsi/gomega/types"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/config/kamelets"
	"github.com/caravan-dev/caravan/internal/apply"
	"github.com/caravan-dev/caravan/internal/controller/pipecontroller"
	"github.com/caravan-dev/caravan/internal/controller/platformcontroller"
	"github.com/caravan-dev/caravan/internal/kameletcatalog"
	"github.com/caravan-dev/caravan/internal/render"
	"github.com/caravan-dev/caravan/test/harness"
)

// installCatalog creates the catalog Kamelets in ns, as `caravan install`
// does in an operator's namespace.
func installCatalog(t *testing.T, ns string) {
	t.Helper()
	catalog, err := kamelets.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range catalog {
		k.Namespace = ns
		if err := env.Client.Create(context.Background(), k); err != nil {
			t.Fatalf("creating kamelet %s: %v", k.Name, err)
		}
	}
}

func kameletRef(name string, props map[string]any) camelv1.Endpoint {
	e := camelv1.Endpoint{Ref: &corev1.ObjectReference{APIVersion: "camel.apache.org/v1", Kind: "Kamelet", Name: name}}
	if props != nil {
		raw := harness.Raw(props)
		e.Properties = &raw
	}
	return e
}

// timerToLog is a binding spec: timer-source (message hello) → log-sink, on
// the test image so that the Integration needs no kit.
func timerToLog() camelv1.PipeSpec {
	return camelv1.PipeSpec{
		Source: kameletRef("timer-source", map[string]any{"message": "hello", "period": 2000}),
		Sink:   kameletRef("log-sink", nil),
		Traits: camelv1.Traits{"container": harness.Raw(map[string]any{"image": harness.TestImage})},
	}
}

func newPipe(ns, name, operatorID string, spec camelv1.PipeSpec) *camelv1.Pipe {
	return &camelv1.Pipe{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{
			camelv1.OperatorIDAnnotation: operatorID, "example.com/team": "payments"},
			Labels: map[string]string{"app": name}},
		Spec: spec,
	}
}

func newKameletBinding(ns, name, operatorID string, spec camelv1.PipeSpec) *camelv1alpha1.KameletBinding {
	p := newPipe(ns, name, operatorID, spec)
	return &camelv1alpha1.KameletBinding{ObjectMeta: p.ObjectMeta, Spec: p.Spec}
}

func pipeStatus(key client.ObjectKey) func() (camelv1.PipeStatus, error) {
	return func() (camelv1.PipeStatus, error) {
		p := &camelv1.Pipe{}
		err := env.Client.Get(context.Background(), key, p)
		return p.Status, err
	}
}

func condition(st camelv1.PipeStatus, t string) metav1.Condition {
	if c := meta.FindStatusCondition(st.Conditions, t); c != nil {
		return *c
	}
	return metav1.Condition{}
}

func noIntegration(key client.ObjectKey) func() error {
	return func() error {
		err := env.Client.Get(context.Background(), key, &camelv1.Integration{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("an Integration exists (error %v)", err)
	}
}

// settledCreating matches the status of a binding whose Integration is
// Deploying with its Deployment applied, once the binding mirrors it:
// phase Creating, Ready=False with the Integration's reason
// DeploymentNotReady, the selector. Creating alone is not settled: the
// binding passes through it with reasons IntegrationApplied and
// IntegrationReconciling first, a status write each.
func settledCreating(generation int64) gomegatypes.GomegaMatcher {
	return And(
		HaveField("Phase", camelv1.PipePhaseCreating),
		HaveField("ObservedGeneration", generation),
		HaveField("Selector", Not(BeEmpty())),
		HaveField("Conditions", ContainElement(And(
			HaveField("Type", camelv1.ConditionReady), HaveField("Status", metav1.ConditionFalse),
			HaveField("Reason", "DeploymentNotReady")))))
}

// creatingPipe creates a timer-to-log Pipe called name, for the test
// operator, in a namespace of its own with the Kamelet catalog, and waits
// until its Integration is Deploying and the Pipe says so: after that
// the operator writes neither (no Deployment becomes ready here).
func creatingPipe(t *testing.T, name string) (ns string, p *camelv1.Pipe, key client.ObjectKey) {
	t.Helper()
	ns = env.Namespace(t)
	installCatalog(t, ns)
	p = newPipe(ns, name, operatorID, timerToLog())
	if err := env.Client.Create(context.Background(), p); err != nil {
		t.Fatalf("creating pipe %s: %v", name, err)
	}
	key = client.ObjectKeyFromObject(p)
	g := NewWithT(t)
	g.Eventually(integrationOf(key), timeout, poll).Should(settledDeploying())
	g.Eventually(pipeStatus(key), timeout, poll).Should(settledCreating(p.Generation))
	return ns, p, key
}

// TestPipeAndKameletBindingGenerateAnIntegration: a timer-source →
// log-sink binding of either kind generates an Integration of its name,
// controlled by it, with its annotations (the operator id first) and
// labels, the Kamelets as sources and their properties; the Integration is
// reconciled by the operator, and the binding mirrors its state.
func TestPipeAndKameletBindingGenerateAnIntegration(t *testing.T) {
	ns := env.Namespace(t)
	installCatalog(t, ns)
	for _, tc := range []struct {
		kind    string
		binding client.Object
	}{
		{"Pipe", newPipe(ns, "ticker", operatorID, timerToLog())},
		{"KameletBinding", newKameletBinding(ns, "legacy-ticker", operatorID, timerToLog())},
	} {
		binding := tc.binding
		t.Run(tc.kind, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(env.Client.Create(context.Background(), binding)).To(Succeed())
			key := client.ObjectKeyFromObject(binding)
			var it *camelv1.Integration
			g.Eventually(last(integrationOf(key), &it), timeout, poll).Should(HaveField("Status.Phase", camelv1.IntegrationPhaseDeploying))
			g.Expect(it.Annotations).To(HaveKeyWithValue(camelv1.OperatorIDAnnotation, operatorID))
			g.Expect(it.Annotations).To(HaveKeyWithValue("example.com/team", "payments"))
			g.Expect(it.Labels).To(HaveKeyWithValue(camelv1.OperatorIDLabel, operatorID))
			g.Expect(it.Labels).To(HaveKeyWithValue("app", key.Name))
			g.Expect(it.Labels).To(HaveKeyWithValue(camelv1.CreatedByKindLabel, tc.kind))
			g.Expect(it.Labels).To(HaveKeyWithValue(camelv1.CreatedByNameLabel, key.Name))
			g.Expect(env.Client.Get(context.Background(), key, binding)).To(Succeed())
			g.Expect(metav1.IsControlledBy(it, binding)).To(BeTrue(), "owner references: %v", it.OwnerReferences)

			var sources []string
			for _, s := range it.Spec.Sources {
				sources = append(sources, s.Name)
			}
			g.Expect(sources).To(ConsistOf("log-sink.kamelet.yaml", "timer-source.kamelet.yaml"))
			g.Expect(string(it.Spec.Flows[0].Raw)).To(ContainSubstring("kamelet:timer-source/source"))
			g.Expect(string(it.Spec.Traits["camel"].Raw)).To(And(
				ContainSubstring("camel.kamelet.timer-source.source.message=hello"),
				ContainSubstring("camel.kamelet.timer-source.source.period=2000"),
				Not(ContainSubstring("camel.kamelet.log-sink.sink.showHeaders")))) // a default, which the runtime reads from the Kamelet
			g.Expect(it.Spec.Dependencies).To(ContainElements("camel:kamelet", "camel:timer", "camel:log"))
			g.Consistently(func() []string {
				events := &eventsv1.EventList{}
				_ = env.Client.List(context.Background(), events, client.InNamespace(ns))
				var reasons []string
				for _, e := range events.Items {
					if e.Regarding.Name == it.Name && e.Type == "Warning" {
						reasons = append(reasons, e.Reason)
					}
				}
				return reasons
			}, time.Second, poll).ShouldNot(ContainElement("DependenciesNotBuilt"),
				"the Kamelets' dependencies of a generated integration on an image are no user's mistake")

			t.Log("the binding mirrors its Integration: Creating until it runs, Ready copied, selector")
			status := func() (camelv1.PipeStatus, error) {
				err := env.Client.Get(context.Background(), key, binding)
				switch b := binding.(type) {
				case *camelv1.Pipe:
					return b.Status, err
				case *camelv1alpha1.KameletBinding:
					return b.Status, err
				}
				return camelv1.PipeStatus{}, err
			}
			var st camelv1.PipeStatus
			g.Eventually(last(status, &st), timeout, poll).Should(WithTransform(func(st camelv1.PipeStatus) string {
				return condition(st, camelv1.ConditionReady).Reason
			}, Equal("DeploymentNotReady")))
			g.Expect(st.Phase).To(Equal(camelv1.PipePhaseCreating))
			g.Expect(condition(st, camelv1.ConditionReady).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(condition(st, camelv1.ConditionReconciling).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(st.Selector).To(Equal("camel.apache.org/integration=" + key.Name))
			g.Expect(st.ObservedGeneration).To(Equal(binding.GetGeneration()))
		})
	}
	g := NewWithT(t)
	g.Eventually(func() []string {
		events := &eventsv1.EventList{}
		_ = env.Client.List(context.Background(), events, client.InNamespace(ns))
		var notes []string
		for _, e := range events.Items {
			if e.Regarding.Name == "ticker" && e.Reason == "PipePhaseUpdated" {
				notes = append(notes, e.Note)
			}
		}
		return notes
	}, timeout, poll).Should(ContainElement(ContainSubstring(`phase "Creating"`)))
}

// TestAPipeCallsAKameletTheClusterLacksForTheRuntimesClasspath: as on Camel K, a Pipe whose Kamelet
// the cluster lacks does not wait: its Integration calls the Kamelet, for the runtime to find on its
// classpath, and both say KameletsAvailable Unknown, naming it. Once the Kamelet exists, the
// Integration mounts it and the condition goes, without any change to the Pipe.
func TestAPipeCallsAKameletTheClusterLacksForTheRuntimesClasspath(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	installCatalog(t, ns)
	spec := timerToLog()
	spec.Sink = kameletRef("audit-sink", map[string]any{"level": "WARN"})
	p := newPipe(ns, "classpath", operatorID, spec)
	g.Expect(env.Client.Create(ctx, p)).To(Succeed())
	key := client.ObjectKeyFromObject(p)

	missing := And(HaveField("Type", "KameletsAvailable"), HaveField("Status", metav1.ConditionUnknown),
		HaveField("Reason", "KameletNotFound"), HaveField("Message", ContainSubstring("the Kamelets audit-sink are in neither namespace "+ns)))
	g.Eventually(pipeStatus(key), timeout, poll).Should(HaveField("Conditions", ContainElement(missing)))
	g.Eventually(integrationOf(key), timeout, poll).Should(And(
		HaveField("Spec.Flows", ContainElement(HaveField("Raw", ContainSubstring(`"to":"kamelet:audit-sink/sink"`)))),
		HaveField("Spec.Traits", HaveKeyWithValue("camel", HaveField("Raw", ContainSubstring("camel.kamelet.audit-sink.sink.level=WARN")))),
		HaveField("Spec.Sources", Not(ContainElement(HaveField("Name", "audit-sink.kamelet.yaml"))))))
	g.Eventually(integrationStatus(key), timeout, poll).Should(HaveField("Conditions", ContainElement(missing)))

	t.Log("the Kamelet appears in the operator's namespace; the Integration mounts it")
	catalog, _ := kamelets.Catalog()
	for _, k := range catalog {
		if k.Name == "log-sink" {
			k.Name, k.Namespace = "audit-sink", operatorNamespace
			g.Expect(env.Client.Create(ctx, k)).To(Succeed())
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), k) })
		}
	}
	g.Eventually(integrationOf(key), timeout, poll).Should(HaveField("Spec.Sources", ContainElement(
		HaveField("Name", "audit-sink.kamelet.yaml"))))
	g.Eventually(pipeStatus(key), timeout, poll).ShouldNot(HaveField("Conditions", ContainElement(HaveField("Type", "KameletsAvailable"))))
}

// TestPipeWithAMissingRequiredPropertyStalls: phase Error, Ready=False
// and Stalled=True naming the Kamelet and the property, no Integration.
func TestPipeWithAMissingRequiredPropertyStalls(t *testing.T) {
	g := NewWithT(t)
	ns := env.Namespace(t)
	installCatalog(t, ns)
	spec := timerToLog()
	spec.Source = kameletRef("timer-source", map[string]any{"period": 10})
	b := newKameletBinding(ns, "no-message", operatorID, spec)
	g.Expect(env.Client.Create(context.Background(), b)).To(Succeed())
	key := client.ObjectKeyFromObject(b)
	status := func() (camelv1.PipeStatus, error) {
		err := env.Client.Get(context.Background(), key, b)
		return b.Status, err
	}
	var st camelv1.PipeStatus
	g.Eventually(last(status, &st), timeout, poll).Should(HaveField("Phase", camelv1.PipePhaseError))
	ready, stalled := condition(st, camelv1.ConditionReady), condition(st, camelv1.ConditionStalled)
	g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(ready.Reason).To(Equal("InvalidBinding"))
	g.Expect(ready.Message).To(ContainSubstring(`kamelet timer-source: missing required property "message"`))
	g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(stalled.Message).To(Equal(ready.Message))
	g.Consistently(noIntegration(key), 2*time.Second, 250*time.Millisecond).Should(Succeed())
}

// TestPipeWithAStepToAnIntegrationCallsItsService: a step that refers to an
// Integration becomes an HTTP call to its Service.
func TestPipeWithAStepToAnIntegrationCallsItsService(t *testing.T) {
	g := NewWithT(t)
	ns := env.Namespace(t)
	installCatalog(t, ns)
	spec := timerToLog()
	spec.Steps = []camelv1.Endpoint{
		kameletRef("insert-header-action", map[string]any{"name": "x-origin", "value": "pipe"}),
		{Ref: &corev1.ObjectReference{APIVersion: "camel.apache.org/v1", Kind: "Integration", Name: "enricher"}},
	}
	p := newPipe(ns, "calls", operatorID, spec)
	g.Expect(env.Client.Create(context.Background(), p)).To(Succeed())
	key := client.ObjectKeyFromObject(p)
	var it *camelv1.Integration
	g.Eventually(last(integrationOf(key), &it), timeout, poll).Should(HaveField("Spec.Flows", Not(BeEmpty())))
	flow := string(it.Spec.Flows[0].Raw)
	g.Expect(flow).To(ContainSubstring(fmt.Sprintf(`{"to":"http://enricher.%s.svc.cluster.local/"}`, ns)))
	g.Expect(flow).To(ContainSubstring(`{"kamelet":{"name":"insert-header-action/action-0"}}`))
	g.Expect(it.Spec.Dependencies).To(ContainElement("camel:http"))
}

// TestPipeGeneratedIntegrationDriftIsReverted: an edit of the Integration's
// spec is put back; the Pipe's scale subresource drives its replicas.
func TestPipeGeneratedIntegrationDriftIsReverted(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	installCatalog(t, ns)
	spec := timerToLog()
	spec.Replicas = new(int32)
	*spec.Replicas = 1
	p := newPipe(ns, "drifty", operatorID, spec)
	g.Expect(env.Client.Create(ctx, p)).To(Succeed())
	key := client.ObjectKeyFromObject(p)
	var want *camelv1.Integration
	g.Eventually(last(integrationOf(key), &want), timeout, poll).Should(HaveField("Spec.Flows", Not(BeEmpty())))

	t.Log("someone edits the flow and the replicas of the Integration")
	edit := `{"spec":{"replicas":4,"flows":[{"route":{"from":{"uri":"timer:hijacked","steps":[{"to":"log:x"}]}}}]}}`
	it := &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name}}
	g.Expect(env.Client.Patch(ctx, it, client.RawPatch(types.MergePatchType, []byte(edit)))).To(Succeed())
	g.Eventually(func() error {
		got, err := integrationOf(key)()
		if err != nil {
			return err
		}
		if string(got.Spec.Flows[0].Raw) != string(want.Spec.Flows[0].Raw) || *got.Spec.Replicas != 1 {
			return fmt.Errorf("flow %s, replicas %d", got.Spec.Flows[0].Raw, *got.Spec.Replicas)
		}
		return nil
	}, timeout, poll).Should(Succeed())

	t.Log("kubectl scale pipe drifty --replicas=3 scales the Integration")
	scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 3}}
	g.Expect(env.Client.SubResource("scale").Update(ctx, p, client.WithSubResourceBody(scale))).To(Succeed())
	g.Eventually(func() int32 {
		got, err := integrationOf(key)()
		if err != nil || got.Spec.Replicas == nil {
			return 0
		}
		return *got.Spec.Replicas
	}, timeout, poll).Should(Equal(int32(3)))
}

// TestPipeThatLeavesIsNotTouched: re-annotated for an operator that does
// not run, the Pipe's label is handed over to that operator, and the Pipe
// and its Integration are otherwise left as they are.
func TestPipeThatLeavesIsNotTouched(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	_, p, key := creatingPipe(t, "leaver")

	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"nobody-runs-this"}}}`, camelv1.OperatorIDAnnotation)
	g.Expect(env.Client.Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
	g.Eventually(func() (string, error) {
		got := &camelv1.Pipe{}
		err := env.Client.Get(ctx, key, got)
		return got.Labels[camelv1.OperatorIDLabel], err
	}, timeout, poll).Should(Equal("nobody-runs-this"))
	it, _ := integrationOf(key)()
	before, _ := pipeStatus(key)()
	g.Consistently(func() error {
		now, err := integrationOf(key)()
		if err != nil {
			return err
		}
		if now.Annotations[camelv1.OperatorIDAnnotation] != operatorID || !equalSpec(now, it) {
			return fmt.Errorf("the Integration was rewritten after its Pipe left: %v", now.Annotations)
		}
		st, _ := pipeStatus(key)()
		if st.ObservedGeneration != before.ObservedGeneration || st.Phase != before.Phase {
			return fmt.Errorf("the Pipe's status was written after it left: %+v", st)
		}
		return nil
	}, 3*time.Second, 250*time.Millisecond).Should(Succeed())
}

// TestPipeInATerminatingNamespaceIsLeftToGo: once its namespace is being
// deleted, a Pipe whose Integration went first is neither applied again
// nor written.
func TestPipeInATerminatingNamespaceIsLeftToGo(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, p, key := creatingPipe(t, "going")
	g.Expect(env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	// No namespace controller runs here: the namespace stays Terminating.
	g.Expect(env.Client.Get(ctx, key, p)).To(Succeed())
	it, err := integrationOf(key)()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Delete(ctx, it)).To(Succeed())

	g.Consistently(func() (string, error) {
		now := &camelv1.Pipe{}
		err := env.Client.Get(ctx, key, now)
		return now.ResourceVersion, err
	}, 5*time.Second, 250*time.Millisecond).Should(Equal(p.ResourceVersion), "the Pipe was written")
	g.Expect(noIntegration(key)()).To(Succeed())
}

func equalSpec(a, b *camelv1.Integration) bool {
	return a.Generation == b.Generation && a.Annotations["camel.apache.org/applied-hash"] == b.Annotations["camel.apache.org/applied-hash"]
}

// TestPipeKameletsAreValidated: the operator validates the Kamelets of its
// namespace and those annotated for it: a bad one gets Ready=False with the
// reason of its problem; one annotated for nobody is left alone.
func TestPipeKameletsAreValidated(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	template := func(uri string) *camelv1.RawObject {
		r := harness.Raw(map[string]any{"from": map[string]any{"uri": uri, "steps": []any{map[string]any{"to": "log:x"}}}})
		return &r
	}
	definition := func(props map[string]any) *camelv1.RawObject {
		r := harness.Raw(map[string]any{"properties": props})
		return &r
	}
	kamelet := func(namespace, name, operator string, spec camelv1.KameletSpec) *camelv1.Kamelet {
		k := &camelv1.Kamelet{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name,
			Labels: map[string]string{camelv1.KameletTypeLabel: "sink"}}, Spec: spec}
		if operator != "" {
			k.Annotations = map[string]string{camelv1.OperatorIDAnnotation: operator}
		}
		return k
	}
	cases := []struct {
		name    string
		kamelet *camelv1.Kamelet
		phase   camelv1.KameletPhase
		reason  string
		message string
	}{
		{name: "a valid Kamelet of the operator's namespace is Ready", phase: camelv1.KameletPhaseReady, reason: "Valid",
			kamelet: kamelet(operatorNamespace, "pipe-test-good-sink", "", camelv1.KameletSpec{
				Template: template("kamelet:source"), Definition: definition(map[string]any{"level": map[string]any{"type": "string", "default": "INFO"}})})},
		{name: "a bad template", phase: camelv1.KameletPhaseError, reason: "InvalidTemplate", message: "must be kamelet:source",
			kamelet: kamelet(ns, "bad-template-sink", operatorID, camelv1.KameletSpec{Template: template("timer:x")})},
		{name: "a bad property", phase: camelv1.KameletPhaseError, reason: "InvalidProperty", message: `property "level": type "text" is unknown`,
			kamelet: kamelet(ns, "bad-property-sink", operatorID, camelv1.KameletSpec{
				Template: template("kamelet:source"), Definition: definition(map[string]any{"level": map[string]any{"type": "text"}})})},
		{name: "a reserved name", phase: camelv1.KameletPhaseError, reason: "InvalidName", message: `name "sink" is reserved`,
			kamelet: kamelet(ns, "sink", operatorID, camelv1.KameletSpec{Template: template("kamelet:source")})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(env.Client.Create(ctx, tc.kamelet)).To(Succeed())
			t.Cleanup(func() { _ = env.Client.Delete(ctx, tc.kamelet) })
			key := client.ObjectKeyFromObject(tc.kamelet)
			k := &camelv1.Kamelet{}
			g.Eventually(func() (camelv1.KameletPhase, error) {
				err := env.Client.Get(ctx, key, k)
				return k.Status.Phase, err
			}, timeout, poll).Should(Equal(tc.phase))
			ready := meta.FindStatusCondition(k.Status.Conditions, camelv1.ConditionReady)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Reason).To(Equal(tc.reason))
			g.Expect(ready.Message).To(ContainSubstring(tc.message))
			if tc.phase == camelv1.KameletPhaseReady {
				g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
				g.Expect(k.Status.Properties).To(Equal([]camelv1.KameletProperty{{Name: "level", Default: "INFO"}}))
			} else {
				g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			}
		})
	}

	t.Run("a Kamelet annotated for the operator is labelled for it, and handed over when re-annotated", func(t *testing.T) {
		g := NewWithT(t)
		k := kamelet(ns, "moving-sink", operatorID, camelv1.KameletSpec{Template: template("kamelet:source")})
		g.Expect(env.Client.Create(ctx, k)).To(Succeed())
		label := func() (string, error) {
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(k), k)
			return k.Labels[camelv1.OperatorIDLabel], err
		}
		g.Eventually(label, timeout, poll).Should(Equal(operatorID))
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"nobody-runs-this"}}}`, camelv1.OperatorIDAnnotation)
		g.Expect(env.Client.Patch(ctx, k, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
		g.Eventually(label, timeout, poll).Should(Equal("nobody-runs-this"))
	})

	t.Run("a Kamelet annotated for nobody, outside the operator's namespace, is left alone", func(t *testing.T) {
		g := NewWithT(t)
		k := kamelet(ns, "unassigned-sink", "", camelv1.KameletSpec{Template: template("timer:x")})
		g.Expect(env.Client.Create(ctx, k)).To(Succeed())
		g.Consistently(func() (camelv1.KameletPhase, error) {
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(k), k)
			return k.Status.Phase, err
		}, 2*time.Second, 250*time.Millisecond).Should(BeEmpty())
	})
}

// TestAPipeAnotherOperatorRanKeepsItsIntegrationUntilItChanges: a Pipe that an operator other than
// Caravan's compiled (its Integration carries no applied hash, its status says which generation it
// compiled) is assigned to this operator. Its Integration is assigned along with it and keeps its
// spec, so its pods would run on; once the Pipe changes, the Integration is replaced with the one
// this operator compiles, and nothing the other operator wrote in its spec stays.
func TestAPipeAnotherOperatorRanKeepsItsIntegrationUntilItChanges(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	installCatalog(t, ns)
	const other = "not-caravans"
	p := &camelv1.Pipe{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "legacy",
		Annotations: map[string]string{camelv1.OperatorIDAnnotation: other}}, Spec: timerToLog()}
	g.Expect(env.Client.Create(ctx, p)).To(Succeed())
	theirs := &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.Name,
		Annotations: map[string]string{camelv1.OperatorIDAnnotation: other},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: camelv1.GroupVersion.String(), Kind: "Pipe", Name: p.Name, UID: p.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: camelv1.IntegrationSpec{Flows: []camelv1.RawObject{harness.Raw(map[string]any{"from": map[string]any{
			"uri": "kamelet:timer-source", "steps": []any{map[string]any{"to": "kamelet:log-sink"}}}})},
			Traits: camelv1.Traits{"camel": harness.Raw(map[string]any{"runtimeVersion": "3.15.0"})}}}
	g.Expect(env.Client.Create(ctx, theirs)).To(Succeed())
	p.Status.ObservedGeneration = p.Generation
	p.Status.Phase = camelv1.PipePhaseReady
	g.Expect(env.Client.Status().Update(ctx, p)).To(Succeed())

	t.Log("assigned to this operator, the Pipe's Integration follows with its spec as it was")
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, camelv1.OperatorIDAnnotation, operatorID)
	g.Expect(env.Client.Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
	key := client.ObjectKeyFromObject(p)
	g.Eventually(func() (*camelv1.Integration, error) {
		it := &camelv1.Integration{}
		return it, env.Client.Get(ctx, key, it)
	}, timeout, poll).Should(And(
		HaveField("Annotations", And(HaveKeyWithValue(camelv1.OperatorIDAnnotation, operatorID),
			HaveKeyWithValue(pipecontroller.KeptForAnnotation, fmt.Sprint(p.Generation)))),
		HaveField("Labels", HaveKeyWithValue(camelv1.OperatorIDLabel, operatorID)),
		HaveField("Spec", Equal(theirs.Spec)), HaveField("Generation", theirs.Generation)))

	t.Log("the Pipe changes: its Integration is replaced with the one this operator compiles")
	patch = `{"spec":{"source":{"properties":{"message":"changed"}}}}`
	g.Expect(env.Client.Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
	g.Eventually(func() (*camelv1.Integration, error) {
		it := &camelv1.Integration{}
		return it, env.Client.Get(ctx, key, it)
	}, timeout, poll).Should(And(
		HaveField("Annotations", And(HaveKey(render.AppliedHashAnnotation), Not(HaveKey(pipecontroller.KeptForAnnotation)))),
		HaveField("Spec.Traits", HaveKeyWithValue("camel", WithTransform(func(r camelv1.RawObject) string { return string(r.JSON.Raw) },
			And(ContainSubstring("message=changed"), Not(ContainSubstring("runtimeVersion")))))),
		HaveField("Spec.Traits", HaveKey("container"))))
}

// TestTheCatalogKeepsAKameletAUserChanged: a Kamelet the catalog applied is left as it is while it
// equals the catalog's, applied again when the catalog's differs, and kept once a user changes its
// spec (kubectl edit, here an update by another field manager); a change of its labels alone does
// not count. The API server's managed fields tell them apart. One of the installer's four, as an
// earlier Caravan installed it, is replaced.
func TestTheCatalogKeepsAKameletAUserChanged(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	catalog, err := kamelets.Catalog()
	g.Expect(err).NotTo(HaveOccurred())
	k := catalog[0].DeepCopy()
	k.Namespace, k.Labels[kameletcatalog.BundledLabel] = ns, "true"
	k.Annotations = map[string]string{kameletcatalog.VersionAnnotation: "4.18.0"}
	k.TypeMeta = metav1.TypeMeta{APIVersion: camelv1.GroupVersion.String(), Kind: "Kamelet"}
	u, err := apply.Configuration(k)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Apply(ctx, u, client.FieldOwner(kameletcatalog.FieldManager), client.ForceOwnership)).To(Succeed())
	judge := func() kameletcatalog.Verdict {
		stored := &camelv1.Kamelet{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(k), stored)).To(Succeed())
		return kameletcatalog.Judge(stored, k, "4.18.0")
	}
	g.Expect(judge()).To(Equal(kameletcatalog.Current), "the API server's copy is the catalog's")
	changed := k.DeepCopy()
	changed.Spec.Dependencies = append(changed.Spec.Dependencies, "camel:jackson")
	stored := &camelv1.Kamelet{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(k), stored)).To(Succeed())
	g.Expect(kameletcatalog.Judge(stored, changed, "4.18.0")).To(Equal(kameletcatalog.Apply))

	stored.Labels["team"] = "payments"
	g.Expect(env.Client.Update(ctx, stored, client.FieldOwner("kubectl-label"))).To(Succeed())
	g.Expect(judge()).To(Equal(kameletcatalog.Current), "a label is no change of the Kamelet")

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(k), stored)).To(Succeed())
	stored.Spec.Dependencies = append(stored.Spec.Dependencies, "camel:jackson")
	g.Expect(env.Client.Update(ctx, stored, client.FieldOwner("kubectl-edit"))).To(Succeed())
	g.Expect(judge()).To(Equal(kameletcatalog.KeptUserChanged))
	g.Expect(kameletcatalog.Judge(stored, nil, "4.20.0")).To(Equal(kameletcatalog.KeptUserChanged))

	starter := catalog[1].DeepCopy()
	starter.Namespace = ns
	starter.TypeMeta = k.TypeMeta
	u, err = apply.Configuration(starter)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Apply(ctx, u, client.FieldOwner("caravan"), client.ForceOwnership)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(starter), stored)).To(Succeed())
	g.Expect(kameletcatalog.Judge(stored, nil, "4.18.0")).To(Equal(kameletcatalog.ReplaceStarter))
	bundled := catalog[1].DeepCopy()
	bundled.Namespace, bundled.TypeMeta = ns, k.TypeMeta
	bundled.Labels[kameletcatalog.BundledLabel] = "true"
	bundled.Annotations = map[string]string{kameletcatalog.VersionAnnotation: "4.18.0"}
	bundled.Spec.Dependencies = append(bundled.Spec.Dependencies, "camel:jackson")
	g.Expect(platformcontroller.ReplaceKamelet(ctx, env.Client, env.Client, stored, bundled)).To(Succeed())
	replaced := &camelv1.Kamelet{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(starter), replaced)).To(Succeed())
	g.Expect(replaced.UID).To(Equal(stored.UID), "replaced in place, never missing")
	g.Expect(kameletcatalog.Judge(replaced, bundled, "4.18.0")).To(Equal(kameletcatalog.Current),
		"the catalog's spec, and its field manager the only one: %+v", replaced.ManagedFields)
	g.Expect(replaced.Annotations).NotTo(HaveKey("camel.apache.org/provider"))
}

// TestAPipeUsesAKameletOfAnotherNamespaceItsServiceAccountMayRead: as on Camel K, a ref to a
// Kamelet of another namespace needs the Pipe's ServiceAccount, allowed to get Kamelets there: a
// Pipe without one, or with one that may not, is refused saying so; once a RoleBinding grants it,
// the Integration mounts the Kamelet of that namespace.
func TestAPipeUsesAKameletOfAnotherNamespaceItsServiceAccountMayRead(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, shared := env.Namespace(t), env.Namespace(t)
	installCatalog(t, ns)
	catalog, _ := kamelets.Catalog()
	for _, k := range catalog {
		if k.Name == "log-sink" {
			k.Name, k.Namespace = "team-sink", shared
			g.Expect(env.Client.Create(ctx, k)).To(Succeed())
		}
	}
	spec := timerToLog()
	spec.Sink = kameletRef("team-sink", nil)
	spec.Sink.Ref.Namespace = shared
	p := newPipe(ns, "cross", operatorID, spec)
	g.Expect(env.Client.Create(ctx, p)).To(Succeed())
	key := client.ObjectKeyFromObject(p)
	g.Eventually(pipeStatus(key), timeout, poll).Should(HaveField("Conditions", ContainElement(And(
		HaveField("Type", camelv1.ConditionReady), HaveField("Reason", "InvalidBinding"),
		HaveField("Message", ContainSubstring("set spec.serviceAccountName to a ServiceAccount of namespace "+ns))))))

	t.Log("with a ServiceAccount that may not read Kamelets there, the Pipe says so")
	g.Expect(env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "runner"}})).To(Succeed())
	stored := &camelv1.Pipe{}
	g.Expect(env.Client.Get(ctx, key, stored)).To(Succeed())
	patch := client.MergeFrom(stored.DeepCopy())
	stored.Spec.ServiceAccountName = "runner"
	g.Expect(env.Client.Patch(ctx, stored, patch)).To(Succeed())
	g.Eventually(pipeStatus(key), timeout, poll).Should(HaveField("Conditions", ContainElement(
		HaveField("Message", ContainSubstring("the ServiceAccount "+ns+"/runner may not get kamelets in namespace "+shared)))))

	t.Log("a RoleBinding grants it: the Integration mounts the Kamelet of that namespace")
	g.Expect(env.Client.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: shared, Name: "kamelet-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"camel.apache.org"}, Resources: []string{"kamelets"}, Verbs: []string{"get"}}}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: shared, Name: "runner-reads-kamelets"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "kamelet-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "runner"}}})).To(Succeed())
	// The binding is looked at again each minute; a label brings that reconcile now.
	g.Expect(env.Client.Patch(ctx, stored, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"granted":"yes"}}}`)))).To(Succeed())
	g.Eventually(integrationOf(key), timeout, poll).Should(HaveField("Spec.Sources", ContainElement(
		HaveField("Name", "team-sink.kamelet.yaml"))))
}

// TestTheKameletsTraitPicksTheKameletsMountedWithTheSources: the Kamelets a route uses are mounted
// with its sources; the kamelets trait's list adds one, and with enabled: false none is, for the
// runtime's classpath to serve them.
func TestTheKameletsTraitPicksTheKameletsMountedWithTheSources(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	installCatalog(t, ns)
	it := harness.NewIntegration(ns, "picked", operatorID, 1)
	it.Spec.Flows = []camelv1.RawObject{harness.Raw(map[string]any{"from": map[string]any{
		"uri": "kamelet:timer-source?message=hi", "steps": []any{map[string]any{"to": "log:out"}}}})}
	it.Spec.Traits["kamelets"] = harness.Raw(map[string]any{"list": "log-sink"})
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	mounted := func() ([]string, error) {
		cm := &corev1.ConfigMap{}
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: render.ConfigMapName(it.Name)}, cm)
		var names []string
		for k := range cm.Data {
			if strings.HasSuffix(k, render.KameletSuffix) {
				names = append(names, k)
			}
		}
		return names, err
	}
	g.Eventually(mounted, timeout, poll).Should(ConsistOf("timer-source"+render.KameletSuffix, "log-sink"+render.KameletSuffix))

	setTrait(t, client.ObjectKeyFromObject(it), "kamelets", map[string]any{"enabled": false})
	g.Eventually(mounted, timeout, poll).Should(BeEmpty())
}

// TestARouteRunsTheVersionOfAKameletItNames: as on Camel K, kamelet:NAME?kameletVersion=V mounts that
// version of the Kamelet; a version it lacks is refused, naming those it has.
func TestARouteRunsTheVersionOfAKameletItNames(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	catalog, _ := kamelets.Catalog()
	for _, k := range catalog {
		if k.Name != "log-sink" {
			continue
		}
		v2 := k.Spec.DeepCopy()
		v2.Template = &camelv1.RawObject{}
		v2.Template.Raw = []byte(`{"from":{"uri":"kamelet:source","steps":[{"to":"log:version-two"}]}}`)
		raw := harness.Raw(v2)
		k.Namespace, k.Spec.Versions = ns, map[string]camelv1.RawObject{"v2": raw}
		g.Expect(env.Client.Create(ctx, k)).To(Succeed())
	}
	it := harness.NewIntegration(ns, "versioned", operatorID, 1)
	it.Spec.Flows = []camelv1.RawObject{harness.Raw(map[string]any{"from": map[string]any{
		"uri": "timer:tick", "steps": []any{map[string]any{"to": "kamelet:log-sink?kameletVersion=v2"}}}})}
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	g.Eventually(func() (string, error) {
		cm := &corev1.ConfigMap{}
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: render.ConfigMapName(it.Name)}, cm)
		return cm.Data["log-sink"+render.KameletSuffix], err
	}, timeout, poll).Should(ContainSubstring("log:version-two"))

	stored := &camelv1.Integration{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(it), stored)).To(Succeed())
	patch := client.MergeFrom(stored.DeepCopy())
	stored.Spec.Flows = []camelv1.RawObject{harness.Raw(map[string]any{"from": map[string]any{
		"uri": "timer:tick", "steps": []any{map[string]any{"to": "kamelet:log-sink?kameletVersion=v9"}}}})}
	g.Expect(env.Client.Patch(ctx, stored, patch)).To(Succeed())
	g.Eventually(integrationStatus(client.ObjectKeyFromObject(it)), timeout, poll).Should(HaveField("Conditions", ContainElement(And(
		HaveField("Type", camelv1.ConditionReady), HaveField("Reason", "KameletInvalid"),
		HaveField("Message", ContainSubstring(`kamelet log-sink has no version "v9": it has v2`))))))
}
