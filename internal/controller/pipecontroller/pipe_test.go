package pipecontroller

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/render"
)

func raw(s string) camelv1.RawObject {
	var r camelv1.RawObject
	r.Raw = []byte(s)
	return r
}

func kameletRef(name string) camelv1.Endpoint {
	return camelv1.Endpoint{Ref: &corev1.ObjectReference{Kind: "Kamelet", APIVersion: "camel.apache.org/v1", Name: name}}
}

func binding() *camelv1alpha1.KameletBinding {
	return &camelv1alpha1.KameletBinding{ObjectMeta: metav1.ObjectMeta{
		Namespace: "apps", Name: "ticker", UID: "uid-1",
		Annotations: map[string]string{
			camelv1.OperatorIDAnnotation:       "tenant-a",
			"team":                             "payments",
			corev1.LastAppliedConfigAnnotation: `{"kind":"KameletBinding"}`,
		},
		Labels: map[string]string{"app": "ticker", camelv1.OperatorIDLabel: "stale"},
	}}
}

func TestTheGeneratedIntegrationInheritsTheBindingsMetadata(t *testing.T) {
	g := NewWithT(t)
	spec := camelv1.IntegrationSpec{Replicas: ptr.To[int32](2), Flows: []camelv1.RawObject{raw(`{"route":{}}`)}}
	it := desiredIntegration(KameletBinding, binding(), spec, "tenant-a")

	g.Expect(it.Name).To(Equal("ticker"))
	g.Expect(it.Namespace).To(Equal("apps"))
	g.Expect(it.APIVersion).To(Equal("camel.apache.org/v1"))
	g.Expect(it.Kind).To(Equal("Integration"))
	g.Expect(it.Annotations).To(HaveKeyWithValue(camelv1.OperatorIDAnnotation, "tenant-a"))
	g.Expect(it.Annotations).To(HaveKeyWithValue("team", "payments"))
	g.Expect(it.Annotations).NotTo(HaveKey(corev1.LastAppliedConfigAnnotation), "kubectl's record of the binding is not the Integration's")
	g.Expect(it.Annotations).To(HaveKey(render.AppliedHashAnnotation))
	g.Expect(it.Labels).To(Equal(map[string]string{
		"app":                      "ticker",
		camelv1.OperatorIDLabel:    "tenant-a",
		camelv1.CreatedByKindLabel: "KameletBinding",
		camelv1.CreatedByNameLabel: "ticker",
	}))
	g.Expect(it.OwnerReferences).To(HaveLen(1))
	owner := it.OwnerReferences[0]
	g.Expect(owner.APIVersion).To(Equal("camel.apache.org/v1alpha1"))
	g.Expect(owner.Kind).To(Equal("KameletBinding"))
	g.Expect(owner.UID).To(BeEquivalentTo("uid-1"))
	g.Expect(*owner.Controller).To(BeTrue())
	g.Expect(it.Spec).To(Equal(spec))
}

func TestTheHashChangesWithTheSpecAndTheAssignment(t *testing.T) {
	g := NewWithT(t)
	spec := camelv1.IntegrationSpec{Flows: []camelv1.RawObject{raw(`{"route":{}}`)}}
	b := binding()
	h := desiredIntegration(Pipe, b, spec, "tenant-a").Annotations[render.AppliedHashAnnotation]
	g.Expect(desiredIntegration(Pipe, b, spec, "tenant-a").Annotations[render.AppliedHashAnnotation]).To(Equal(h), "the hash is stable")

	spec.Replicas = ptr.To[int32](3)
	g.Expect(desiredIntegration(Pipe, b, spec, "tenant-a").Annotations[render.AppliedHashAnnotation]).NotTo(Equal(h))
	spec.Replicas = nil
	b.Annotations[camelv1.OperatorIDAnnotation] = "tenant-b"
	g.Expect(desiredIntegration(Pipe, b, spec, "tenant-a").Annotations[render.AppliedHashAnnotation]).NotTo(Equal(h))
}

func TestDuringAMoveTheIntegrationKeepsItsLabelUntilHandedOver(t *testing.T) {
	labelled := func(id string) *camelv1.Integration {
		return &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{camelv1.OperatorIDLabel: id}}}
	}
	cases := []struct {
		name     string
		observed *camelv1.Integration
		want     string
	}{
		{name: "a new Integration is labelled for the binding's operator", want: "tenant-a"},
		{name: "an Integration of the binding's operator keeps its label", observed: labelled("tenant-a"), want: "tenant-a"},
		{name: "an Integration still labelled for the previous operator keeps that label", observed: labelled("tenant-b"), want: "tenant-b"},
		{name: "an Integration without the label gets it", observed: labelled(""), want: "tenant-a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(integrationLabel(binding(), tc.observed)).To(Equal(tc.want))
		})
	}
}

func TestALongBindingNameIsNotALabel(t *testing.T) {
	b := binding()
	b.Name = "a-very-long-name-that-is-a-fine-object-name-but-longer-than-sixty-three-chars"
	it := desiredIntegration(Pipe, b, camelv1.IntegrationSpec{}, "tenant-a")
	NewWithT(t).Expect(it.Labels).NotTo(HaveKey(camelv1.CreatedByNameLabel))
}

func TestDriftIsAChangeOfWhatTheBindingSets(t *testing.T) {
	want := desiredIntegration(Pipe, binding(), camelv1.IntegrationSpec{
		Replicas: ptr.To[int32](2),
		Flows:    []camelv1.RawObject{raw(`{"route":{"id":"binding","from":{"uri":"kamelet:timer-source/source"}}}`)},
		Traits:   camelv1.Traits{"camel": raw(`{"properties":["a=1"]}`)},
	}, "tenant-a")
	cases := []struct {
		name    string
		mutate  func(*camelv1.Integration)
		current bool
	}{
		{name: "an untouched Integration is current", mutate: func(*camelv1.Integration) {}, current: true},
		{name: "raw trees written with other spacing and key order are current", current: true,
			mutate: func(it *camelv1.Integration) {
				it.Spec.Flows[0] = raw(`{ "route": { "from": {"uri": "kamelet:timer-source/source"}, "id": "binding" } }`)
			}},
		{name: "a trait someone added is kept", current: true,
			mutate: func(it *camelv1.Integration) { it.Spec.Traits["environment"] = raw(`{"vars":["TZ=UTC"]}`) }},
		{name: "an edited flow is drift",
			mutate: func(it *camelv1.Integration) { it.Spec.Flows[0] = raw(`{"route":{"from":{"uri":"timer:x"}}}`) }},
		{name: "an added flow is drift",
			mutate: func(it *camelv1.Integration) { it.Spec.Flows = append(it.Spec.Flows, raw(`{}`)) }},
		{name: "changed replicas are drift",
			mutate: func(it *camelv1.Integration) { it.Spec.Replicas = ptr.To[int32](5) }},
		{name: "a removed property is drift",
			mutate: func(it *camelv1.Integration) { it.Spec.Traits["camel"] = raw(`{"properties":[]}`) }},
		{name: "another hash is not current",
			mutate: func(it *camelv1.Integration) { it.Annotations[render.AppliedHashAnnotation] = "other" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := want.DeepCopy()
			tc.mutate(got)
			NewWithT(t).Expect(current(want, got)).To(Equal(tc.current))
		})
	}
}

func TestReferencedKameletsAreEveryKameletEndpoint(t *testing.T) {
	uri := "log:info"
	handler, _ := json.Marshal(map[string]any{"sink": map[string]any{"endpoint": map[string]any{
		"ref": map[string]any{"kind": "Kamelet", "apiVersion": "camel.apache.org/v1", "name": "dlq-sink"}}}})
	spec := &camelv1.PipeSpec{
		Source: kameletRef("timer-source"),
		Steps: []camelv1.Endpoint{kameletRef("insert-header-action"), {URI: &uri},
			{Ref: &corev1.ObjectReference{Kind: "Integration", Name: "other"}}, kameletRef("insert-header-action")},
		Sink:         kameletRef("log-sink"),
		ErrorHandler: &camelv1.RawObject{JSON: raw(string(handler)).JSON},
	}
	NewWithT(t).Expect(referencedKamelets(spec)).To(Equal([]string{"dlq-sink", "insert-header-action", "log-sink", "timer-source"}))
	NewWithT(t).Expect(referencedKamelets(&camelv1.PipeSpec{Sink: camelv1.Endpoint{URI: &uri}})).To(BeEmpty())
}
