// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package kameletcatalog

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/config/kamelets"
)

// jar is a jar holding the given files.
func jar(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for name, content := range files {
		f, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const webhook = `apiVersion: camel.apache.org/v1
kind: Kamelet
metadata:
  name: webhook-source
  labels: {camel.apache.org/kamelet.type: source}
spec:
  definition: {title: Webhook Source}
  template:
    from: {uri: "platform-http:///{{subpath}}", steps: [{to: kamelet:sink}]}
`

func TestReadTakesTheKameletsOfTheJarMarkedAsBundledFromItsVersion(t *testing.T) {
	g := NewWithT(t)
	ks, err := Read(jar(t, map[string]string{
		"kamelets/webhook-source.kamelet.yaml": webhook,
		"kamelets/README.md":                   "not a Kamelet",
		"META-INF/MANIFEST.MF":                 "Manifest-Version: 1.0\n",
	}), "4.18.0")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ks).To(HaveLen(1))
	k := ks[0]
	g.Expect(k.Name).To(Equal("webhook-source"))
	g.Expect(k.APIVersion).To(Equal("camel.apache.org/v1"))
	g.Expect(k.Labels).To(Equal(map[string]string{camelv1.KameletTypeLabel: "source", BundledLabel: "true"}))
	g.Expect(k.Annotations).To(HaveKeyWithValue(VersionAnnotation, "4.18.0"))
	g.Expect(string(k.Spec.Template.Raw)).To(ContainSubstring("platform-http"))

	_, err = Read(jar(t, map[string]string{"kamelets/bad.kamelet.yaml": "kind: ConfigMap\nmetadata: {name: x}\n"}), "4.18.0")
	g.Expect(err).To(MatchError(ContainSubstring(`the catalog's kamelets/bad.kamelet.yaml: not a Kamelet (kind "ConfigMap"`)))
	_, err = Read(jar(t, map[string]string{"META-INF/MANIFEST.MF": ""}), "4.18.0")
	g.Expect(err).To(MatchError(ContainSubstring("holds no kamelets/*.kamelet.yaml")))
	_, err = Read([]byte("not a zip"), "4.18.0")
	g.Expect(err).To(MatchError(ContainSubstring("reading the catalog jar")))
}

func TestJudgeAppliesTheCatalogWithoutOverwritingWhatAUserOrANewerCatalogWrote(t *testing.T) {
	bundled := func(version string, managers ...metav1.ManagedFieldsEntry) *camelv1.Kamelet {
		return &camelv1.Kamelet{ObjectMeta: metav1.ObjectMeta{Name: "webhook-source",
			Labels: map[string]string{BundledLabel: "true"}, Annotations: map[string]string{VersionAnnotation: version}, ManagedFields: managers}}
	}
	owns := func(manager, subresource, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Subresource: subresource, FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
	}
	for _, c := range []struct {
		name     string
		existing *camelv1.Kamelet
		want     Verdict
	}{
		{"a Kamelet the namespace lacks is applied", nil, Apply},
		{"a Kamelet a user made is kept", &camelv1.Kamelet{ObjectMeta: metav1.ObjectMeta{Name: "webhook-source"}}, KeptUserMade},
		{"one of an older catalog is brought to this one", bundled("4.8.5", owns(FieldManager, "", `{"f:spec":{}}`)), Apply},
		{"one of this catalog is applied again, which changes nothing", bundled("4.18.0", owns(FieldManager, "", `{"f:spec":{}}`)), Apply},
		{"one of a newer catalog, another operator's, is kept", bundled("4.20.0"), KeptNewer},
		{"one whose spec a user edited is kept", bundled("4.18.0", owns(FieldManager, "", `{"f:spec":{}}`), owns("kubectl-edit", "", `{"f:spec":{"f:template":{}}}`)), KeptUserChanged},
		{"one whose labels only a user changed is applied", bundled("4.18.0", owns("kubectl-label", "", `{"f:metadata":{"f:labels":{}}}`)), Apply},
		{"the status the operators write is no change", bundled("4.18.0", owns("caravan-operator", "status", `{"f:status":{"f:phase":{}}}`)), Apply},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Judge(c.existing, nil, "4.18.0"); got != c.want {
				t.Errorf("Judge = %q, want %q", got, c.want)
			}
		})
	}
	t.Run("one equal to the catalog's is left as it is", func(t *testing.T) {
		want := bundled("4.18.0")
		want.Spec.Definition = &camelv1.RawObject{}
		want.Spec.Definition.Raw = []byte(`{"title": "Webhook Source", "type": "object"}`)
		existing := want.DeepCopy()
		existing.Spec.Definition.Raw = []byte(`{"type":"object","title":"Webhook Source"}`) // as the API server writes it
		existing.Labels["team"] = "a"
		existing.ManagedFields = []metav1.ManagedFieldsEntry{owns(FieldManager, "", `{"f:spec":{}}`)}
		if got := Judge(existing, want, "4.18.0"); got != Current {
			t.Errorf("Judge = %q, want %q", got, Current)
		}
		want.Spec.Definition.Raw = []byte(`{"title": "Webhook", "type": "object"}`)
		if got := Judge(existing, want, "4.18.0"); got != Apply {
			t.Errorf("Judge of one whose spec differs = %q, want %q", got, Apply)
		}
	})
	t.Run("the installer's four, unchanged, are replaced; changed, they are kept", func(t *testing.T) {
		starters, err := kamelets.Catalog()
		if err != nil || len(starters) != 4 {
			t.Fatalf("the installer's Kamelets: %d, %v", len(starters), err)
		}
		for _, s := range starters {
			if got := Judge(s, nil, "4.18.0"); got != ReplaceStarter {
				t.Errorf("Judge(%s) = %q, want %q", s.Name, got, ReplaceStarter)
			}
			s.Spec.Definition.Raw = bytes.Replace(s.Spec.Definition.Raw, []byte(`"description":"`), []byte(`"description":"Ours: `), 1)
			if got := Judge(s, nil, "4.18.0"); got != KeptUserMade {
				t.Errorf("Judge(%s, changed) = %q, want %q", s.Name, got, KeptUserMade)
			}
		}
	})
	if !strings.HasSuffix(Dependency("4.18.0"), "camel-kamelets:4.18.0") || JarName("4.18.0") != "camel-kamelets-4.18.0.jar" {
		t.Error("the catalog's artifact is misnamed")
	}
}
