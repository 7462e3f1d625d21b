// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// defaultRuntimeProperties are the runtime's properties of input's integration.
const defaultRuntimeProperties = `camel.main.routes-include-pattern=file:/etc/camel/sources/*
camel.main.shutdownTimeout=25
camel.component.kamelet.location=file:/etc/camel/sources,classpath:kamelets
camel.component.kamelet.noErrorHandler=false
camel.management.enabled=true
camel.management.port=9876
camel.management.host={{env:POD_IP:0.0.0.0}}
camel.management.healthCheckEnabled=true
camel.health.exposureLevel=full
camel.server.enabled=true
camel.server.port=8080
camel.server.host={{env:POD_IP:0.0.0.0}}
`

func TestConfigMapHoldsSourcesFlowsAndProperties(t *testing.T) {
	g := NewWithT(t)
	in := input(t, `{"camel":{"properties":["b=2","a=1"]}}`)
	in.Integration.Spec.Flows = append(in.Integration.Spec.Flows, raw(`{"route":{"id":"r2","from":{"uri":"direct:b"}}}`))

	cm, err := ConfigMap(in)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cm.TypeMeta).To(Equal(metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}))
	g.Expect(cm.Name).To(Equal("hello-camel"))
	g.Expect(cm.Data).To(Equal(map[string]string{
		"Hello.java":             "class Hello {}",
		"flows.yaml":             "- from:\n    steps:\n    - log: hi\n    uri: timer:tick\n- route:\n    from:\n      uri: direct:b\n    id: r2\n",
		"application.properties": defaultRuntimeProperties + "b=2\na=1\n",
	}))
	g.Expect(cm.BinaryData).To(BeNil())
}

func TestConfigMapSourceContent(t *testing.T) {
	cases := []struct {
		name       string
		source     camelv1.SourceSpec
		wantData   map[string]string
		wantBinary map[string][]byte
	}{
		{name: "compressed content is decompressed as kamel run --compression writes it",
			source:   camelv1.SourceSpec{Name: "r.xml", Compression: ptr(true), Content: base64.StdEncoding.EncodeToString(gzipped(t, "<routes/>"))},
			wantData: map[string]string{"r.xml": "<routes/>"}},
		{name: "raw content goes into binary data",
			source:     camelv1.SourceSpec{Name: "r.yaml", RawContent: []byte("- from: {}")},
			wantBinary: map[string][]byte{"r.yaml": []byte("- from: {}")}},
		{name: "compressed raw content is decompressed into binary data",
			source:     camelv1.SourceSpec{Name: "r.xml", Compression: ptr(true), RawContent: gzipped(t, "<routes/>")},
			wantBinary: map[string][]byte{"r.xml": []byte("<routes/>")}},
		{name: "a source without content is an empty file",
			source:   camelv1.SourceSpec{Name: "empty.xml"},
			wantData: map[string]string{"empty.xml": ""}},
		{name: "an explicit language allows any extension",
			source:   camelv1.SourceSpec{Name: "routes.txt", Language: camelv1.LanguageYAML, Content: "- from: {}"},
			wantData: map[string]string{"routes.txt": "- from: {}"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in := input(t, `{}`)
			in.Integration.Spec.Sources = []camelv1.SourceSpec{tc.source}
			in.Integration.Spec.Flows = nil

			cm, err := ConfigMap(in)

			g.Expect(err).NotTo(HaveOccurred())
			wantData := map[string]string{"application.properties": defaultRuntimeProperties}
			for k, v := range tc.wantData {
				wantData[k] = v
			}
			g.Expect(cm.Data).To(Equal(wantData))
			g.Expect(cm.BinaryData).To(Equal(tc.wantBinary))
		})
	}
}

// TestSourceErrors checks that ConfigMap and Deployment refuse the same bad sources.
func TestSourceErrors(t *testing.T) {
	java := func(name string) camelv1.SourceSpec { return camelv1.SourceSpec{Name: name, Content: "class X {}"} }
	cases := []struct {
		name    string
		sources []camelv1.SourceSpec
		want    string
	}{
		{name: "a source with an unknown extension is refused, listing the known languages",
			sources: []camelv1.SourceSpec{java("hello.rb")},
			want:    `source hello.rb: unknown language "rb" (known: yaml, xml, java)`},
		{name: "a source with an unknown explicit language is refused",
			sources: []camelv1.SourceSpec{{Name: "a.java", Language: "ruby"}}, want: `source a.java: unknown language "ruby"`},
		{name: "a source without language nor extension is refused",
			sources: []camelv1.SourceSpec{java("Routes")}, want: "source Routes: no language and no file extension"},
		{name: "two sources with the same name are refused",
			sources: []camelv1.SourceSpec{java("A.java"), java("B.java"), java("A.java")},
			want:    "source A.java: more than one source has this name"},
		{name: "a source named like the properties file is refused",
			sources: []camelv1.SourceSpec{{Name: "application.properties", Language: "yaml"}}, want: "source application.properties: the name is reserved"},
		{name: "a source named like the flows file is refused",
			sources: []camelv1.SourceSpec{{Name: "flows.yaml"}}, want: "source flows.yaml: the name is reserved"},
		{name: "a source name with a slash is refused",
			sources: []camelv1.SourceSpec{java("org/acme/A.java")}, want: "source org/acme/A.java: the name must be a valid file name"},
		{name: "a source without a name is refused",
			sources: []camelv1.SourceSpec{java("A.java"), {Content: "x"}}, want: "spec.sources[1]: the source has no name"},
		{name: "a source with content and contentRef is refused",
			sources: []camelv1.SourceSpec{{Name: "A.java", ContentRef: "my-cm", Content: "class A {}"}}, want: "source A.java: set content or contentRef, not both"},
		{name: "a contentRef that names no ConfigMap is refused",
			sources: []camelv1.SourceSpec{{Name: "A.java", ContentRef: "My CM"}}, want: `source A.java: contentRef "My CM" must name a ConfigMap`},
		{name: "compressed content that is not base64 is refused",
			sources: []camelv1.SourceSpec{{Name: "A.java", Content: "not base64!", Compression: ptr(true)}},
			want:    "source A.java: compressed content is not base64"},
		{name: "compressed content that is not gzip is refused",
			sources: []camelv1.SourceSpec{{Name: "A.java", Content: base64.StdEncoding.EncodeToString([]byte("plain")), Compression: ptr(true)}},
			want:    "source A.java: compressed content is not gzip"},
		{name: "every bad source is reported",
			sources: []camelv1.SourceSpec{java("a.rb"), java("b.py")}, want: `unknown language "rb" (known: yaml, xml, java)` + "\n" + `source b.py: unknown language "py"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in := input(t, `{}`)
			in.Integration.Spec.Sources = tc.sources
			_, err := ConfigMap(in)
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
			_, err = Deployment(in)
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}

func TestConfigMapRefusesMoreThanOneMebibyte(t *testing.T) {
	g := NewWithT(t)
	in := input(t, `{}`)
	in.Integration.Spec.Sources = []camelv1.SourceSpec{
		{Name: "a.yaml", Content: strings.Repeat("a", 600_000)},
		{Name: "b.yaml", Content: strings.Repeat("b", 600_000)},
	}
	_, err := ConfigMap(in)
	g.Expect(err).To(MatchError(ContainSubstring("take 1200")))
	g.Expect(err).To(MatchError(ContainSubstring("more than the 1048576 bytes a ConfigMap holds")))
}

func TestSourceLanguage(t *testing.T) {
	cases := []struct {
		name   string
		source camelv1.SourceSpec
		want   camelv1.Language
	}{
		{name: "yaml comes from .yaml", source: camelv1.SourceSpec{Name: "r.yaml"}, want: camelv1.LanguageYAML},
		{name: "yaml comes from .yml", source: camelv1.SourceSpec{Name: "r.yml"}, want: camelv1.LanguageYAML},
		{name: "the extension is read without regard to case", source: camelv1.SourceSpec{Name: "R.JAVA"}, want: camelv1.LanguageJava},
		{name: "xml comes from .xml", source: camelv1.SourceSpec{Name: "r.xml"}, want: camelv1.LanguageXML},
		{name: "the language field wins over the extension", source: camelv1.SourceSpec{Name: "r.groovy", Language: "java"}, want: camelv1.LanguageJava},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := SourceLanguage(tc.source)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

func TestALanguageOfCamelKsAPIThatTheRuntimeCannotLoadIsRefused(t *testing.T) {
	for _, src := range []camelv1.SourceSpec{{Name: "r.groovy"}, {Name: "r.js"}, {Name: "r.kts"}, {Name: "r.jsh"},
		{Name: "r.java", Language: camelv1.LanguageGroovy}} {
		t.Run(src.Name+" "+string(src.Language), func(t *testing.T) {
			_, err := SourceLanguage(src)
			if err == nil || !strings.Contains(err.Error(), "has no loader for") || !strings.Contains(err.Error(), "write the route in YAML, XML or Java") {
				t.Fatalf("SourceLanguage(%+v) = %v, want a refusal that says what to do", src, err)
			}
		})
	}
}

func TestAContentRefSourceIsMountedFromItsConfigMapBesideTheOthers(t *testing.T) {
	g := NewWithT(t)
	in := input(t, `{}`)
	in.Integration.Spec.Sources = []camelv1.SourceSpec{{Name: "Hello.java", Content: "class Hello {}"},
		{Name: "routes.yaml", ContentRef: "team-routes"}, {Name: "more.xml", ContentRef: "team-routes", ContentKey: "more"}}
	cm, err := ConfigMap(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cm.Data).NotTo(HaveKey("routes.yaml"), "a contentRef source is not copied")
	g.Expect(cm.Data).NotTo(HaveKey("content"))
	d := mustDeployment(t, in)
	var sources *corev1.Volume
	for i, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == SourcesVolume {
			sources = &d.Spec.Template.Spec.Volumes[i]
		}
	}
	g.Expect(sources).NotTo(BeNil())
	g.Expect(sources.Projected.Sources).To(Equal([]corev1.VolumeProjection{
		{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "hello-camel"},
			Items: []corev1.KeyToPath{{Key: "Hello.java", Path: "Hello.java"}, {Key: "flows.yaml", Path: "flows.yaml"}}}},
		{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "team-routes"},
			Items: []corev1.KeyToPath{{Key: "content", Path: "routes.yaml"}, {Key: "more", Path: "more.xml"}}}},
	}))
	without := mustDeployment(t, input(t, `{}`))
	for _, v := range without.Spec.Template.Spec.Volumes {
		if v.Name == SourcesVolume {
			g.Expect(v.ConfigMap).NotTo(BeNil(), "without contentRef the sources stay a ConfigMap volume, so pods do not roll")
		}
	}
}

func TestTheDeprecatedConfigurationGivesPropertiesAndVariablesAsCamelKReadsIt(t *testing.T) {
	g := NewWithT(t)
	in := input(t, `{"camel":{"properties":["shared=from-the-trait"]},"environment":{"vars":["LEVEL=from-the-trait"]}}`)
	in.Integration.Spec.Configuration = []camelv1.ConfigurationSpec{{Type: "property", Value: "shared=from-configuration"},
		{Type: "property", Value: "only=configuration"}, {Type: "env", Value: "LEVEL=from-configuration"},
		{Type: "env", Value: "TZ=UTC"}, {Type: "env", Value: "CAMEL_K_DIGEST=x"}, {Type: "configmap", Value: "my-cm"}}
	cm, err := ConfigMap(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cm.Data[PropertiesKey]).To(HaveSuffix("shared=from-configuration\nonly=configuration\nshared=from-the-trait\n"),
		"the camel trait's properties come later and win")
	env := mustDeployment(t, in).Spec.Template.Spec.Containers[0].Env
	g.Expect(env).To(ContainElements(corev1.EnvVar{Name: "LEVEL", Value: "from-the-trait"}, corev1.EnvVar{Name: "TZ", Value: "UTC"}))
	g.Expect(env).To(ContainElement(corev1.EnvVar{Name: "CAMEL_K_DIGEST", Value: "v1-digest"}), "an operator's variable is not replaced")
	g.Expect(IgnoredConfigurations(in.Integration)).To(Equal([]string{"configmap"}))
}

// TestPropertiesOutsideASCIIAreWrittenAsTheRuntimeReadsThem: the runtime reads its properties as
// ISO-8859-1, as java.util.Properties does, so a character outside ASCII is written \uXXXX, and
// one outside the BMP as its UTF-16 pair.
func TestPropertiesOutsideASCIIAreWrittenAsTheRuntimeReadsThem(t *testing.T) {
	g := NewWithT(t)
	in := input(t, `{"camel":{"properties":["greeting=café","clé=ok","smile=😀"]}}`)
	cm, err := ConfigMap(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cm.Data[PropertiesKey]).To(HaveSuffix("greeting=caf\\u00e9\ncl\\u00e9=ok\nsmile=\\ud83d\\ude00\n"))
}
