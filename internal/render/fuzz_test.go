// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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
