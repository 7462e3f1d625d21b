// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	"encoding/json"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/fixture"
	"github.com/caravan-dev/caravan/internal/trait"
)

// FuzzTraitsThatParseRender: any trait tree the trait package accepts renders the
// integration's children, or is refused with an error (an ingress without a port); it
// never panics, and what renders is stable (the same input twice, the same hash).
func FuzzTraitsThatParseRender(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"container":{"port":8080,"image":"example/a:1"},"service":{"enabled":true}}`,
		`{"health":{"enabled":true,"livenessProbeEnabled":true}}`,
		`{"mount":{"configs":["configmap:a/b"],"resources":["secret:s@/x"],"volumes":["c:/d"],"emptyDirs":["e:/f"]}}`,
		`{"affinity":{"enabled":true,"nodeAffinityLabels":["a in (b,c)"],"podAntiAffinity":true}}`,
		`{"toleration":{"enabled":true,"taints":["a=b:NoExecute:5"]}}`, `{"pdb":{"enabled":true,"minAvailable":"50%"}}`,
		`{"ingress":{"enabled":true,"host":"a.example.com"},"container":{"port":80}}`,
		`{"owner":{"targetLabels":["team"]},"jvm":{"options":["-Xmx1g"],"debug":true},"prometheus":{"enabled":true}}`,
		`{"deployment":{"strategy":"RollingUpdate","rollingUpdateMaxSurge":"25%"},"environment":{"vars":["A=1"]}}`,
	} {
		f.Add(seed)
	}
	// The trait trees the bench creates as bad input.
	for _, seed := range fixture.MalformedTraits {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, traits string) {
		var tree camelv1.Traits
		if json.Unmarshal([]byte(traits), &tree) != nil {
			return
		}
		parsed, err := trait.Parse(tree)
		if err != nil {
			return
		}
		in := Input{
			Integration: &camelv1.Integration{
				ObjectMeta: metav1.ObjectMeta{Name: "fuzz", Namespace: "ns", UID: types.UID("uid"),
					Labels: map[string]string{"team": "a"}},
				Spec: camelv1.IntegrationSpec{Sources: []camelv1.SourceSpec{{Name: "A.java", Content: "class A {}"}}, Traits: tree},
			},
			Traits: parsed, OperatorID: "op", Image: "example/a:1", Digest: "d",
		}
		first, err := Deployment(in)
		if err != nil {
			t.Fatalf("traits %s parse but the Deployment does not render: %v", traits, err)
		}
		second, _ := Deployment(in)
		if first.Labels[AppliedHashLabel] != second.Labels[AppliedHashLabel] {
			t.Fatalf("traits %s render two different Deployments", traits)
		}
		if _, err := Service(in); err != nil {
			t.Fatalf("traits %s parse but the Service does not render: %v", traits, err)
		}
		if _, err := PodDisruptionBudget(in); err != nil {
			t.Fatalf("traits %s parse but the PodDisruptionBudget does not render: %v", traits, err)
		}
		if _, err := Ingress(in); err != nil && err != ErrIngressWithoutService {
			t.Fatalf("traits %s parse but the Ingress does not render: %v", traits, err)
		}
	})
}

// FuzzSourcesAndFlowsRender: an integration's source (name, language, content, maybe
// compressed) and flow either render into the ConfigMap, the source under its name and
// the flow under flows.yaml, with the Deployment mounting it; or are refused with an
// error that names the source (or the flows). It never panics.
func FuzzSourcesAndFlowsRender(f *testing.F) {
	f.Add("routes.yaml", "", "- from:\n    uri: timer:x\n", false, `{"from":{"uri":"timer:tick","steps":[{"to":"log:info"}]}}`)
	f.Add("Hello.java", "java", "class Hello {}", false, "")
	f.Add("routes.rb", "", "from('timer:x')", false, "")
	f.Add("a.groovy", "groovy", "H4sIAAAAAAAA/w==", true, "")
	f.Add("flows.yaml", "yaml", "x", false, "")
	f.Add("", "xml", "<routes/>", false, `[1,2]`)
	f.Add("bad name!.xml", "xml", "<routes/>", false, `{"from":null}`)
	f.Fuzz(func(t *testing.T, name, language, content string, compressed bool, flow string) {
		it := &camelv1.Integration{
			ObjectMeta: metav1.ObjectMeta{Name: "fuzz", Namespace: "ns", UID: types.UID("uid")},
			Spec: camelv1.IntegrationSpec{Sources: []camelv1.SourceSpec{{Name: name, Language: camelv1.Language(language),
				Content: content, Compression: &compressed}}},
		}
		if json.Valid([]byte(flow)) {
			it.Spec.Flows = []camelv1.RawObject{{JSON: apiextensionsv1.JSON{Raw: []byte(flow)}}}
		}
		in := Input{Integration: it, OperatorID: "op", Image: "example/a:1", Digest: "d"}
		cm, err := ConfigMap(in)
		if err != nil {
			if !strings.Contains(err.Error(), "source") && !strings.Contains(err.Error(), "flow") {
				t.Fatalf("source %q (%q), flow %q: the refusal names neither the source nor the flows: %v", name, language, flow, err)
			}
			return
		}
		if _, ok := cm.Data[name]; !ok {
			if _, ok := cm.BinaryData[name]; !ok {
				t.Fatalf("source %q rendered, but the ConfigMap does not hold it", name)
			}
		}
		for key := range cm.Data {
			if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
				t.Fatalf("the ConfigMap holds an invalid key %q: %v", key, errs)
			}
		}
		if _, err := Deployment(in); err != nil {
			t.Fatalf("source %q renders its ConfigMap but not the Deployment: %v", name, err)
		}
	})
}
