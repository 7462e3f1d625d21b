// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	"encoding/json"
	"maps"
	"testing"

	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/trait"
)

func raw(s string) camelv1.RawObject {
	var r camelv1.RawObject
	r.Raw = []byte(s)
	return r
}

// input is a valid Input: one Java source, one flow, traits from the JSON tree given.
func input(t *testing.T, traits string) Input {
	t.Helper()
	var tree camelv1.Traits
	if err := json.Unmarshal([]byte(traits), &tree); err != nil {
		t.Fatalf("bad test traits: %v", err)
	}
	parsed, err := trait.Parse(tree)
	if err != nil {
		t.Fatalf("bad test traits: %v", err)
	}
	return Input{
		Integration: &camelv1.Integration{
			ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "ns", UID: types.UID("uid-1"),
				Annotations: map[string]string{camelv1.OperatorIDAnnotation: "tenant-a"}},
			Spec: camelv1.IntegrationSpec{
				Sources: []camelv1.SourceSpec{{Name: "Hello.java", Content: "class Hello {}"}},
				Flows:   []camelv1.RawObject{raw(`{"from":{"uri":"timer:tick","steps":[{"log":"hi"}]}}`)},
			},
		},
		Traits:     parsed,
		OperatorID: "tenant-a",
		Image:      "registry.local/kit@sha256:abc",
		Digest:     "v1-digest",
	}
}

// children renders every child, failing the test on error.
func children(t *testing.T, in Input) []metav1.Object {
	t.Helper()
	cm, err := ConfigMap(in)
	if err != nil {
		t.Fatalf("ConfigMap: %v", err)
	}
	d, err := Deployment(in)
	if err != nil {
		t.Fatalf("Deployment: %v", err)
	}
	out := []metav1.Object{cm, d}
	svc, err := Service(in)
	if err != nil {
		t.Fatalf("Service: %v", err)
	}
	if svc != nil {
		out = append(out, svc)
	}
	return out
}

func TestEveryChildIsLabelledAndOwned(t *testing.T) {
	g := NewWithT(t)
	in := input(t, `{"container":{"port":8080}}`)
	objs := children(t, in)
	g.Expect(objs).To(HaveLen(3))
	for _, o := range objs {
		g.Expect(o.GetNamespace()).To(Equal("ns"))
		g.Expect(o.GetLabels()).To(MatchAllKeys(Keys{
			camelv1.IntegrationLabel: Equal("hello"), camelv1.OperatorIDLabel: Equal("tenant-a"),
			AppliedHashLabel: Not(BeEmpty())}))
		// A Deployment's new annotations are a new generation: a move
		// would show it rolling out.
		g.Expect(o.GetAnnotations()).To(BeEmpty())
		g.Expect(o.GetOwnerReferences()).To(Equal([]metav1.OwnerReference{{
			APIVersion: "camel.apache.org/v1", Kind: "Integration", Name: "hello", UID: "uid-1",
			Controller: ptr(true), BlockOwnerDeletion: ptr(true)}}))
	}
}

func TestChildrenCarryTheOwnersIDNotTheIntegrationsAnnotation(t *testing.T) {
	g := NewWithT(t)
	in := input(t, `{}`)
	in.Integration.Annotations[camelv1.OperatorIDAnnotation] = "tenant-b"
	for _, o := range children(t, in) {
		g.Expect(o.GetLabels()).To(HaveKeyWithValue(camelv1.OperatorIDLabel, "tenant-a"))
	}
}

func TestRenderingIsDeterministic(t *testing.T) {
	g := NewWithT(t)
	traits := `{"container":{"port":8080,"requestCPU":"100m","requestMemory":"128Mi","limitCPU":"1","limitMemory":"1Gi"},
		"environment":{"vars":["Z=1","A=2","M=3","B=4"]},"camel":{"properties":["z=1","a=2","m=3"]},
		"service":{"type":"NodePort"}}`
	build := func() []string {
		in := input(t, traits)
		in.Integration.Spec.Sources = append(in.Integration.Spec.Sources,
			camelv1.SourceSpec{Name: "b.yaml", Content: "- from: {}"}, camelv1.SourceSpec{Name: "a.xml", Content: "<routes/>"},
			camelv1.SourceSpec{Name: "C.java", Content: "class C {}"}, camelv1.SourceSpec{Name: "d.bin.yaml", RawContent: []byte{0, 1, 2}})
		tpl := raw(`{"spec":{"containers":[{"name":"integration","env":[{"name":"Q","value":"1"}]}],
			"initContainers":[{"name":"b"},{"name":"a"}],"nodeSelector":{"z":"1","a":"2"}}}`)
		in.Integration.Spec.Template = &tpl
		var out []string
		for _, o := range children(t, in) {
			b, err := json.Marshal(o)
			g.Expect(err).NotTo(HaveOccurred())
			out = append(out, string(b))
		}
		return out
	}
	first := build()
	for range 20 {
		g.Expect(build()).To(Equal(first))
	}
}

func TestAppliedHashIsTheHashOfTheChildWithoutIt(t *testing.T) {
	g := NewWithT(t)
	in := input(t, `{"container":{"port":8080}}`)
	for _, o := range children(t, in) {
		labels := maps.Clone(o.GetLabels())
		h := labels[AppliedHashLabel]
		delete(labels, AppliedHashLabel)
		o.SetLabels(labels)
		g.Expect(Hash(o)).To(Equal(h))
		g.Expect(h).To(MatchRegexp(`^[0-9a-f]{16}$`))
	}
}

func TestAppliedHashChangesWithTheInput(t *testing.T) {
	cases := []struct {
		name   string
		change func(in *Input)
	}{
		{name: "a new digest changes the Deployment's hash", change: func(in *Input) { in.Digest = "v1-other" }},
		{name: "a new image changes the Deployment's hash", change: func(in *Input) { in.Image = "other" }},
		{name: "a new owner changes the Deployment's hash", change: func(in *Input) { in.OperatorID = "tenant-b" }},
		{name: "scaling changes the Deployment's hash", change: func(in *Input) { in.Integration.Spec.Replicas = ptr(int32(3)) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in := input(t, `{}`)
			before, err := Deployment(in)
			g.Expect(err).NotTo(HaveOccurred())
			tc.change(&in)
			after, err := Deployment(in)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(after.Labels[AppliedHashLabel]).NotTo(Equal(before.Labels[AppliedHashLabel]))
		})
	}
}

func TestRenderRefusesAnIncompleteInput(t *testing.T) {
	cases := []struct {
		name   string
		change func(in *Input)
		want   string
	}{
		{name: "an input without an integration is refused", change: func(in *Input) { in.Integration = nil }, want: "no integration"},
		{name: "an input without an operator id is refused", change: func(in *Input) { in.OperatorID = "" }, want: "no operator id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in := input(t, `{"container":{"port":8080}}`)
			tc.change(&in)
			_, err := ConfigMap(in)
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
			_, err = Deployment(in)
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
			_, err = Service(in)
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}
