// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package kit

import (
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// cluster is what a Lookup reads: this operator's kits, every kit, and the image the previous
// owner's pods run. It counts the reads from the API server.
type cluster struct {
	own, all map[string]*camelv1.IntegrationKit
	running  string
	anyReads int
	fail     error
}

func (c *cluster) Own(ns, name string) (*camelv1.IntegrationKit, error) {
	return c.own[ns+"/"+name], nil
}

func (c *cluster) Any(ns, name string) (*camelv1.IntegrationKit, error) {
	c.anyReads++
	return c.all[ns+"/"+name], c.fail
}

func (c *cluster) Runs(image string) (bool, error) { return image != "" && image == c.running, nil }

// kitOf is a kit of operator id named name, Ready with image when image is set.
func kitOf(id, name, image string, labels, annotations map[string]string) *camelv1.IntegrationKit {
	k := &camelv1.IntegrationKit{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
		Labels: map[string]string{}, Annotations: map[string]string{camelv1.OperatorIDAnnotation: id}}}
	for key, v := range labels {
		k.Labels[key] = v
	}
	for key, v := range annotations {
		k.Annotations[key] = v
	}
	if image != "" {
		k.Status.Phase, k.Status.Image = camelv1.IntegrationKitPhaseReady, image
	}
	return k
}

// failed is k in phase Error, its image kept.
func failed(k *camelv1.IntegrationKit) *camelv1.IntegrationKit {
	k.Status.Phase = camelv1.IntegrationKitPhaseError
	return k
}

func TestTheKitAnIntegrationRunsIsChosenFromWhatTheOperatorsHold(t *testing.T) {
	ours := ForIntegration([]string{"camel:http"}, nil, platformSpec())
	ours.OperatorID = "b"
	theirs := ours
	theirs.OperatorID = "a"
	adopted := ours.AdoptedName("reg/kit-a@sha256:1")
	pinnedWrap := WrappingName("promoted", "reg/promoted@sha256:2", "b")
	hash := map[string]string{SpecHashLabel: ours.Hash()}

	type want struct {
		name     string
		existing bool
		made     map[string]string // the made kit's labels and annotations that matter
		image    string
		anyReads int
		err      string
	}
	for _, tc := range []struct {
		name    string
		req     Request
		cluster cluster
		want    want
	}{{
		name: "an integration of one operator builds the kit of its dependencies, reading nothing of the API server",
		req:  Request{OperatorID: "b", Namespace: "ns", Spec: ours},
		want: want{name: ours.Name(), made: map[string]string{camelv1.IntegrationKitTypeLabel: camelv1.IntegrationKitTypePlatform, SpecHashLabel: ours.Hash()}},
	}, {
		name:    "an integration runs the operator's kit of its dependencies when there is one",
		req:     Request{OperatorID: "b", Namespace: "ns", Spec: ours, Previous: "a"},
		cluster: cluster{own: map[string]*camelv1.IntegrationKit{"ns/" + ours.Name(): kitOf("b", ours.Name(), "reg/kit-b@sha256:3", hash, nil)}},
		want:    want{name: ours.Name(), existing: true},
	}, {
		name: "a moved integration wraps the previous owner's kit of the same spec that its pods run",
		req:  Request{OperatorID: "b", Namespace: "ns", Spec: ours, Previous: "a"},
		cluster: cluster{running: "reg/kit-a@sha256:1", all: map[string]*camelv1.IntegrationKit{
			"ns/" + theirs.Name(): kitOf("a", theirs.Name(), "reg/kit-a@sha256:1", map[string]string{SpecHashLabel: theirs.Hash()}, nil)}},
		want: want{name: adopted, image: "reg/kit-a@sha256:1", anyReads: 1, made: map[string]string{
			camelv1.IntegrationKitTypeLabel: camelv1.IntegrationKitTypeExternal, SpecHashLabel: ours.Hash(), AdoptedFromAnnotation: theirs.Name()}},
	}, {
		name: "a moved integration whose pods run another image builds its own kit",
		req:  Request{OperatorID: "b", Namespace: "ns", Spec: ours, Previous: "a"},
		cluster: cluster{running: "reg/other@sha256:9", all: map[string]*camelv1.IntegrationKit{
			"ns/" + theirs.Name(): kitOf("a", theirs.Name(), "reg/kit-a@sha256:1", map[string]string{SpecHashLabel: theirs.Hash()}, nil)}},
		want: want{name: ours.Name(), anyReads: 1, made: map[string]string{camelv1.IntegrationKitTypeLabel: camelv1.IntegrationKitTypePlatform}},
	}, {
		name: "a previous owner's kit that is not Ready is not wrapped",
		req:  Request{OperatorID: "b", Namespace: "ns", Spec: ours, Previous: "a"},
		cluster: cluster{running: "reg/kit-a@sha256:1", all: map[string]*camelv1.IntegrationKit{
			"ns/" + theirs.Name(): failed(kitOf("a", theirs.Name(), "reg/kit-a@sha256:1", map[string]string{SpecHashLabel: theirs.Hash()}, nil))}},
		want: want{name: ours.Name(), anyReads: 1, made: map[string]string{camelv1.IntegrationKitTypeLabel: camelv1.IntegrationKitTypePlatform}},
	}, {
		name: "a previous owner's kit whose label says another spec is not wrapped",
		req:  Request{OperatorID: "b", Namespace: "ns", Spec: ours, Previous: "a"},
		cluster: cluster{running: "reg/kit-a@sha256:1", all: map[string]*camelv1.IntegrationKit{
			"ns/" + theirs.Name(): kitOf("a", theirs.Name(), "reg/kit-a@sha256:1", map[string]string{SpecHashLabel: "0000"}, nil)}},
		want: want{name: ours.Name(), anyReads: 1, made: map[string]string{camelv1.IntegrationKitTypeLabel: camelv1.IntegrationKitTypePlatform}},
	}, {
		name: "a moved integration keeps the wrapping kit it runs, reading nothing of the API server",
		req:  Request{OperatorID: "b", Namespace: "ns", Spec: ours, Previous: "a", Current: adopted},
		cluster: cluster{own: map[string]*camelv1.IntegrationKit{"ns/" + adopted: kitOf("b", adopted, "reg/kit-a@sha256:1", hash,
			map[string]string{AdoptedFromAnnotation: theirs.Name()})}},
		want: want{name: adopted, existing: true},
	}, {
		name: "a wrapping kit of other dependencies is left for the kit of the new ones",
		req:  Request{OperatorID: "b", Namespace: "ns", Spec: ours, Current: adopted},
		cluster: cluster{own: map[string]*camelv1.IntegrationKit{"ns/" + adopted: kitOf("b", adopted, "reg/kit-a@sha256:1",
			map[string]string{SpecHashLabel: "0000"}, map[string]string{AdoptedFromAnnotation: theirs.Name()})}},
		want: want{name: ours.Name(), made: map[string]string{camelv1.IntegrationKitTypeLabel: camelv1.IntegrationKitTypePlatform}},
	}, {
		name:    "a pinned kit of this operator runs as it is",
		req:     Request{OperatorID: "b", Namespace: "ns", PinnedNamespace: "ns", PinnedName: "promoted", Previous: "a"},
		cluster: cluster{own: map[string]*camelv1.IntegrationKit{"ns/promoted": kitOf("b", "promoted", "reg/promoted@sha256:2", nil, nil)}},
		want:    want{name: "promoted", existing: true},
	}, {
		name: "a pinned kit of another operator is neither run nor made for an integration that did not move",
		req:  Request{OperatorID: "b", Namespace: "ns", PinnedNamespace: "ns", PinnedName: "promoted"},
		cluster: cluster{running: "reg/promoted@sha256:2", all: map[string]*camelv1.IntegrationKit{
			"ns/promoted": kitOf("a", "promoted", "reg/promoted@sha256:2", nil, nil)}},
		want: want{name: "promoted"},
	}, {
		name: "a moved integration pinned to the previous owner's kit its pods run wraps that kit's image",
		req:  Request{OperatorID: "b", Namespace: "ns", PinnedNamespace: "ns", PinnedName: "promoted", Previous: "a"},
		cluster: cluster{running: "reg/promoted@sha256:2", all: map[string]*camelv1.IntegrationKit{
			"ns/promoted": kitOf("a", "promoted", "reg/promoted@sha256:2", nil, nil)}},
		want: want{name: pinnedWrap, image: "reg/promoted@sha256:2", anyReads: 1, made: map[string]string{
			camelv1.IntegrationKitTypeLabel: camelv1.IntegrationKitTypeExternal, AdoptedFromAnnotation: "promoted"}},
	}, {
		name: "a pinned kit of this operator that its cache lacks yet is not wrapped",
		req:  Request{OperatorID: "b", Namespace: "ns", PinnedNamespace: "ns", PinnedName: "promoted", Previous: "a"},
		cluster: cluster{running: "reg/promoted@sha256:2", all: map[string]*camelv1.IntegrationKit{
			"ns/promoted": kitOf("b", "promoted", "reg/promoted@sha256:2", nil, nil)}},
		want: want{name: "promoted", anyReads: 1},
	}, {
		name: "a pinned kit of another namespace is never wrapped",
		req:  Request{OperatorID: "b", Namespace: "ns", PinnedNamespace: "shared", PinnedName: "promoted", Previous: "a"},
		cluster: cluster{running: "reg/promoted@sha256:2", all: map[string]*camelv1.IntegrationKit{
			"shared/promoted": kitOf("a", "promoted", "reg/promoted@sha256:2", nil, nil)}},
		want: want{name: "promoted"},
	}, {
		name: "a moved pinned integration keeps the wrapping kit it runs",
		req:  Request{OperatorID: "b", Namespace: "ns", PinnedNamespace: "ns", PinnedName: "promoted", Previous: "a", Current: pinnedWrap},
		cluster: cluster{own: map[string]*camelv1.IntegrationKit{"ns/" + pinnedWrap: kitOf("b", pinnedWrap, "reg/promoted@sha256:2", nil,
			map[string]string{AdoptedFromAnnotation: "promoted"})}},
		want: want{name: pinnedWrap, existing: true},
	}, {
		name:    "a failed read of the previous owner's kit is an error that says what was read",
		req:     Request{OperatorID: "b", Namespace: "ns", Spec: ours, Previous: "a"},
		cluster: cluster{fail: errors.New("connection refused")},
		want:    want{name: ours.Name(), anyReads: 1, err: "reading the kit of the previous owner a: connection refused"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := tc.cluster
			got, err := Choose(tc.req, &c)
			if tc.want.err != "" {
				g.Expect(err).To(MatchError(tc.want.err))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got.Name).To(Equal(tc.want.name))
			g.Expect(c.anyReads).To(Equal(tc.want.anyReads), "reads from the API server")
			switch {
			case tc.want.existing:
				g.Expect(got.Kit).NotTo(BeNil())
				g.Expect(got.Make).To(BeNil())
			case tc.want.made == nil:
				g.Expect(got.Kit).To(BeNil())
				g.Expect(got.Make).To(BeNil(), "a pinned kit that is not the operator's is never made")
			default:
				g.Expect(got.Kit).To(BeNil())
				g.Expect(got.Make).NotTo(BeNil())
				g.Expect(got.Make.Name).To(Equal(tc.want.name))
				g.Expect(got.Make.Namespace).To(Equal(tc.req.Namespace))
				g.Expect(got.Make.Spec.Image).To(Equal(tc.want.image))
				g.Expect(got.Make.Annotations).To(HaveKeyWithValue(camelv1.OperatorIDAnnotation, "b"))
				g.Expect(got.Make.Labels).To(HaveKeyWithValue(camelv1.OperatorIDLabel, "b"))
				g.Expect(got.Why).To(ContainSubstring(tc.want.name))
				for key, v := range tc.want.made {
					g.Expect(got.Make.Labels[key]+got.Make.Annotations[key]).To(Equal(v), key)
				}
			}
		})
	}
}

func TestAMoveToAnOperatorOfAnotherProviderBuildsItsKitAndOneOfTheSameKeepsThePods(t *testing.T) {
	g := NewWithT(t)
	quarkus := platformSpec()
	quarkus.Build.RuntimeProvider, quarkus.Build.RuntimeVersion = "quarkus", "3.31.2"
	theirs := ForIntegration([]string{"camel:http"}, nil, quarkus)
	theirs.OperatorID = "a"
	kitA, err := theirs.resource("a", "ns", theirs.Name())
	g.Expect(err).NotTo(HaveOccurred())
	kitA.Status.Phase, kitA.Status.Image = camelv1.IntegrationKitPhaseReady, "reg/kit-a@sha256:1"
	c := cluster{running: "reg/kit-a@sha256:1", all: map[string]*camelv1.IntegrationKit{"ns/" + kitA.Name: kitA}}

	t.Log("to an operator of camel-main: its own kit is built, and the pods roll onto it")
	onMain := ForIntegration([]string{"camel:http"}, nil, platformSpec())
	onMain.OperatorID = "b"
	got, err := Choose(Request{OperatorID: "b", Namespace: "ns", Spec: onMain, Previous: "a"}, &c)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Make).NotTo(BeNil())
	g.Expect(got.Make.Spec.Image).To(BeEmpty(), "the quarkus kit's image was wrapped for a camel-main operator")

	t.Log("to an operator of Camel Quarkus: the wrapping kit keeps the provider, whose command line the pods run")
	onQuarkus := theirs
	onQuarkus.OperatorID = "b"
	got, err = Choose(Request{OperatorID: "b", Namespace: "ns", Spec: onQuarkus, Previous: "a"}, &c)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Make).NotTo(BeNil())
	g.Expect(got.Make.Spec.Image).To(Equal("reg/kit-a@sha256:1"))
	g.Expect(ProviderOf(got.Make)).To(Equal("quarkus"))

	t.Log("pinned to it: the wrapping kit records the wrapped kit's provider")
	got, err = Choose(Request{OperatorID: "b", Namespace: "ns", PinnedNamespace: "ns", PinnedName: kitA.Name, Previous: "a"}, &c)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Make).NotTo(BeNil())
	g.Expect(ProviderOf(got.Make)).To(Equal("quarkus"))
}
