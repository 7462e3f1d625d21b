// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package digest

import (
	"regexp"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

func raw(s string) camelv1.RawObject {
	var r camelv1.RawObject
	r.Raw = []byte(s)
	return r
}

func integration() *camelv1.Integration {
	replicas := int32(1)
	template := raw(`{"spec":{"containers":[{"name":"integration","env":[{"name":"A","value":"1"}]}]}}`)
	return &camelv1.Integration{
		ObjectMeta: metav1.ObjectMeta{
			Name: "hello", Namespace: "ns",
			Annotations: map[string]string{camelv1.OperatorIDAnnotation: "tenant-a", "note": "x"},
			Labels:      map[string]string{camelv1.OperatorIDLabel: "tenant-a"},
		},
		Spec: camelv1.IntegrationSpec{
			Replicas:     &replicas,
			Sources:      []camelv1.SourceSpec{{Name: "Hello.java", Content: "class Hello {}"}},
			Flows:        []camelv1.RawObject{raw(`{"from":{"uri":"timer:tick","steps":[{"log":"hi"}]}}`)},
			Traits:       camelv1.Traits{"container": raw(`{"image":"quay.io/a/b:1","port":8080}`), "camel": raw(`{"properties":["a=1"]}`)},
			Dependencies: []string{"camel:http"},
			Template:     &template,
			Repositories: []string{"https://repo.example.com"},
		},
	}
}

func TestIntegrationDigest(t *testing.T) {
	cases := []struct {
		name   string
		change func(it *camelv1.Integration)
		same   bool
	}{
		{name: "the same spec with keys in another order has the same digest", same: true, change: func(it *camelv1.Integration) {
			it.Spec.Traits["container"] = raw(`{ "port": 8080, "image": "quay.io/a/b:1" }`)
			it.Spec.Flows[0] = raw(`{"from":{"steps":[{"log":"hi"}],"uri":"timer:tick"}}`)
			tpl := raw(`{"spec":{"containers":[{"env":[{"value":"1","name":"A"}],"name":"integration"}]}}`)
			it.Spec.Template = &tpl
		}},
		{name: "scaling keeps the digest", same: true, change: func(it *camelv1.Integration) { *it.Spec.Replicas = 5 }},
		{name: "dropping replicas keeps the digest", same: true, change: func(it *camelv1.Integration) { it.Spec.Replicas = nil }},
		{name: "a status change keeps the digest", same: true, change: func(it *camelv1.Integration) {
			it.Status.Phase = camelv1.IntegrationPhaseRunning
			it.Status.Digest = "v1-old"
		}},
		{name: "moving to another operator keeps the digest", same: true, change: func(it *camelv1.Integration) {
			it.Annotations[camelv1.OperatorIDAnnotation] = "tenant-b"
		}},
		{name: "an unrelated annotation keeps the digest", same: true, change: func(it *camelv1.Integration) {
			it.Annotations["note"] = "y"
			it.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = "{}"
		}},
		{name: "a label change keeps the digest", same: true, change: func(it *camelv1.Integration) {
			it.Labels[camelv1.OperatorIDLabel] = "tenant-b"
			it.Labels["team"] = "x"
		}},
		{name: "changing a trait changes the digest", change: func(it *camelv1.Integration) {
			it.Spec.Traits["container"] = raw(`{"image":"quay.io/a/b:2","port":8080}`)
		}},
		{name: "adding a trait changes the digest", change: func(it *camelv1.Integration) {
			it.Spec.Traits["environment"] = raw(`{"vars":["A=1"]}`)
		}},
		{name: "changing a source changes the digest", change: func(it *camelv1.Integration) {
			it.Spec.Sources[0].Content = "class Hello { int x; }"
		}},
		{name: "renaming a source changes the digest", change: func(it *camelv1.Integration) { it.Spec.Sources[0].Name = "Bye.java" }},
		{name: "changing a flow changes the digest", change: func(it *camelv1.Integration) {
			it.Spec.Flows[0] = raw(`{"from":{"uri":"timer:tock","steps":[{"log":"hi"}]}}`)
		}},
		{name: "adding a dependency changes the digest", change: func(it *camelv1.Integration) {
			it.Spec.Dependencies = append(it.Spec.Dependencies, "camel:kafka")
		}},
		{name: "pinning a kit changes the digest", change: func(it *camelv1.Integration) {
			it.Spec.IntegrationKit = &corev1.ObjectReference{Name: "kit-1"}
		}},
		{name: "changing the profile changes the digest", change: func(it *camelv1.Integration) { it.Spec.Profile = "Kubernetes" }},
		{name: "changing the template changes the digest", change: func(it *camelv1.Integration) { it.Spec.Template = nil }},
		{name: "changing the configuration changes the digest", change: func(it *camelv1.Integration) {
			it.Spec.Configuration = []camelv1.ConfigurationSpec{{Type: "property", Value: "a=1"}}
		}},
		{name: "adding a repository changes the digest", change: func(it *camelv1.Integration) { it.Spec.Repositories = nil }},
		{name: "changing the service account changes the digest", change: func(it *camelv1.Integration) {
			it.Spec.ServiceAccountName = "runner"
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			before, err := Integration(integration())
			g.Expect(err).NotTo(HaveOccurred())
			it := integration()
			tc.change(it)
			after, err := Integration(it)
			g.Expect(err).NotTo(HaveOccurred())
			if tc.same {
				g.Expect(after).To(Equal(before))
			} else {
				g.Expect(after).NotTo(Equal(before))
			}
		})
	}
}

func TestIntegrationDigestShape(t *testing.T) {
	g := NewWithT(t)
	d, err := Integration(integration())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d).To(MatchRegexp(`^v2-[a-z2-7]{52}$`))
	g.Expect(len(d)).To(BeNumerically("<=", 63), "a digest fits in a label value")
	g.Expect(regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`).MatchString(d)).To(BeTrue())

	empty, err := Integration(&camelv1.Integration{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(empty).NotTo(Equal(d))
}

func TestIntegrationDigestRefusesMalformedTrees(t *testing.T) {
	g := NewWithT(t)
	it := integration()
	it.Spec.Traits["container"] = raw(`{"image":`)
	_, err := Integration(it)
	g.Expect(err).To(MatchError(ContainSubstring("spec.traits.container: invalid JSON")))
}
