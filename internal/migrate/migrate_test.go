package migrate

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/fixture"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// running is an integration Camel K's operator runs, built by it on Camel Quarkus.
func running() *camelv1.Integration {
	it := &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hello", Generation: 2,
		Annotations: map[string]string{camelv1.OperatorIDAnnotation: "camel-k"}}}
	it.Spec.Sources = []camelv1.SourceSpec{{Name: "hello.yaml", Content: "- from:\n    uri: timer:tick\n    steps:\n    - to: log:info\n"}}
	it.Status.Phase = camelv1.IntegrationPhaseRunning
	it.Status.ObservedGeneration = 2
	it.Status.RuntimeProvider, it.Status.RuntimeVersion = "quarkus", "3.15.3"
	return it
}

func none(string) bool { return false }

func TestAPlanSaysWhatTheMoveKeepsAndWhatDiffers(t *testing.T) {
	t.Run("a running integration keeps its pods, and will be rebuilt on camel-main when its spec changes", func(t *testing.T) {
		g := NewWithT(t)
		p := PlanIntegration(running(), none, nil)
		g.Expect(p.Keeps).To(ContainSubstring("its pods run on"))
		g.Expect(p.Differences).To(ConsistOf(ContainSubstring("built by its operator on Camel Quarkus (runtime 3.15.3): Caravan builds its own kit on its new operator's runtime provider (camel-main, unless")))
	})
	t.Run("an integration of its own image is not rebuilt", func(t *testing.T) {
		g := NewWithT(t)
		it := running()
		it.Spec.Sources = nil
		it.Spec.Traits = camelv1.Traits{"container": fixture.Raw(map[string]any{"image": "quay.io/acme/route:1"})}
		g.Expect(PlanIntegration(it, none, nil).Differences).To(BeEmpty())
	})
	t.Run("a spec changed since its operator deployed it is deployed as Caravan renders it", func(t *testing.T) {
		g := NewWithT(t)
		it := running()
		it.Generation = 3
		g.Expect(PlanIntegration(it, none, nil).Keeps).To(ContainSubstring("its pods roll"))
	})
	t.Run("what Caravan does not run or read is listed, each on its line", func(t *testing.T) {
		g := NewWithT(t)
		it := running()
		it.Annotations[camelv1.IntegrationProfileAnnotation] = "debug"
		it.Spec.Sources = append(it.Spec.Sources,
			camelv1.SourceSpec{Name: "greet.groovy", Content: "from('timer:x').to('log:y')"},
			camelv1.SourceSpec{Name: "k.yaml", Content: "- from:\n    uri: kamelet:timer-source\n    steps:\n    - to: kamelet:log-sink\n"},
			camelv1.SourceSpec{Name: "old.yaml", Content: "- from:\n    uri: timer:t\n    steps:\n    - set-body: {constant: x}\n"})
		it.Spec.Traits = camelv1.Traits{"knative": fixture.Raw(map[string]any{"enabled": true})}
		it.Spec.Configuration = []camelv1.ConfigurationSpec{{Type: "property", Value: "quarkus.log.level=DEBUG"}}
		installed := func(k string) bool { return k == "log-sink" }
		g.Expect(PlanIntegration(it, installed, nil).Differences).To(ConsistOf(
			ContainSubstring("Camel Quarkus"),
			And(ContainSubstring("greet.groovy"), ContainSubstring("write the route in YAML, XML or Java")),
			ContainSubstring("the Camel K traits knative are kept but do nothing on Caravan"),
			ContainSubstring("the property quarkus.log.level is for Quarkus"),
			HavePrefix("the Kamelets timer-source are not in namespace team: once the spec changes, the runtime looks for them on its classpath"),
			And(ContainSubstring("source old.yaml: set-body (write setBody)"), ContainSubstring("Caravan refuses the routes once the spec changes")),
		))
	})
	t.Run("on an operator whose platform builds on Camel Quarkus, quarkus.* keys are read", func(t *testing.T) {
		g := NewWithT(t)
		it := running()
		it.Spec.Configuration = []camelv1.ConfigurationSpec{{Type: "property", Value: "quarkus.log.level=DEBUG"}}
		it.Spec.Traits = camelv1.Traits{"camel": fixture.Raw(map[string]any{"properties": []string{"quarkus.http.port=8081"}})}
		g.Expect(PlanIntegration(it, none, runtime.Quarkus).Differences).To(ConsistOf(
			ContainSubstring("Caravan builds its own kit on Camel Quarkus, as its new operator's platform says")))
		g.Expect(PlanIntegration(it, none, runtime.Main).Differences).To(ConsistOf(
			ContainSubstring("on camel-main, as its new operator's platform says"),
			ContainSubstring("the camel-main runtime does not read the Quarkus properties quarkus.http.port"),
			ContainSubstring("the property quarkus.log.level is for Quarkus")))
		it.Spec.Traits = camelv1.Traits{"camel": fixture.Raw(map[string]any{"runtimeProvider": "main"})}
		g.Expect(PlanIntegration(it, none, runtime.Quarkus).Differences).To(ConsistOf(
			ContainSubstring("on camel-main, as its camel trait's runtimeProvider says"), ContainSubstring("the property quarkus.log.level is for Quarkus")))
	})
	t.Run("bad traits are said, not a reason to fail", func(t *testing.T) {
		g := NewWithT(t)
		it := running()
		it.Spec.Traits = camelv1.Traits{"container": fixture.Raw(map[string]any{"port": "eighty"})}
		g.Expect(PlanIntegration(it, none, nil).Differences).To(ContainElement(ContainSubstring("its traits are bad input to Caravan")))
	})
}

func TestABindingKeepsItsIntegrationUnlessItChangedSinceItsOperatorCompiledIt(t *testing.T) {
	g := NewWithT(t)
	g.Expect(PlanBinding(3, 3).Keeps).To(HavePrefix("its pods run on"))
	g.Expect(PlanBinding(4, 3).Keeps).To(ContainSubstring("its pods roll"))
}
