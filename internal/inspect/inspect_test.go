// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package inspect

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/catalog"
	"github.com/caravan-dev/caravan/internal/fixture"
)

type sourceCase struct {
	name     string
	lang     camelv1.Language
	src      string
	deps     []string
	unknown  []string
	kamelets []string
}

func runSourceCases(t *testing.T, cases []sourceCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Source(catalog.Camel(), tc.lang, []byte(tc.src))
			if err != nil {
				t.Fatalf("Source: %v", err)
			}
			if !slices.Equal(got.Dependencies, tc.deps) {
				t.Errorf("dependencies: got %q, want %q", got.Dependencies, tc.deps)
			}
			if !slices.Equal(got.Unknown, tc.unknown) {
				t.Errorf("unknown schemes: got %q, want %q", got.Unknown, tc.unknown)
			}
			if !slices.Equal(got.Kamelets, tc.kamelets) {
				t.Errorf("kamelets: got %q, want %q", got.Kamelets, tc.kamelets)
			}
		})
	}
}

func TestYAMLRoutesNeedTheirComponents(t *testing.T) {
	runSourceCases(t, []sourceCase{
		{name: "a from uri and a short to in steps need both components", lang: camelv1.LanguageYAML, src: `
- from:
    uri: "kafka:orders"
    steps:
      - to: "jms:queue:orders"
      - to:
          uri: aws2-s3:bucket
          parameters:
            region: "http:not-an-endpoint"
`, deps: []string{"camel:aws2-s3", "camel:jms", "camel:kafka"}},
		{name: "a route wrapper and nested EIPs are followed", lang: camelv1.LanguageYAML, src: `
- route:
    id: r
    from:
      uri: timer:t
      steps:
        - choice:
            when:
              - simple: "${body} != null"
                steps:
                  - toD: "https://example.org/${header.id}"
            otherwise:
              steps:
                - wireTap: "seda:audit"
`, deps: []string{"camel:http", "camel:seda"}},
		{name: "only runtime components need nothing", lang: camelv1.LanguageYAML, src: `
- from: {uri: "timer:tick", steps: [{to: "log:info"}, {to: "platform-http:/x"}]}
`},
		{name: "kamelets are named apart, their components left to them; placeholders are skipped", lang: camelv1.LanguageYAML, src: `
- from:
    uri: "kamelet:kafka-source"
    steps:
      - kamelet: {name: aws-s3-sink}
      - kamelet: "log-sink?showHeaders=true"
      - to: "kamelet://http-sink/route-1?url=x"
      - to: "kamelet:{{name}}"
      - to: "{{sink.uri}}"
      - to: "{{scheme}}:resource"
      - toD: "${header.target}"
`, kamelets: []string{"aws-s3-sink", "http-sink", "kafka-source", "log-sink"}},
		{name: "an unknown scheme is reported apart", lang: camelv1.LanguageYAML, src: `
- from: {uri: "direct:in", steps: [{to: "acme:thing"}]}
`, deps: []string{"camel:direct"}, unknown: []string{"acme"}},
		{name: "the REST DSL needs the rest component", lang: camelv1.LanguageYAML, src: `
- rest:
    path: /greet
    get:
      - to: direct:greet
`, deps: []string{"camel:direct", "camel:rest"}},
		{name: "a contract-first REST DSL needs rest-openapi", lang: camelv1.LanguageYAML, src: `
- rest:
    openApi:
      specification: petstore.json
`, deps: []string{"camel:rest", "camel:rest-openapi"}},
		{name: "data formats follow their library", lang: camelv1.LanguageYAML, src: `
- from:
    uri: direct:a
    steps:
      - marshal: {json: {library: Gson}}
      - unmarshal: {json: {}}
      - marshal: {avro: {library: Jackson}}
      - unmarshal: {csv: {}}
`, deps: []string{"camel:csv", "camel:direct", "camel:gson", "camel:jackson", "camel:jackson-avro"}},
		{name: "expression languages need their modules", lang: camelv1.LanguageYAML, src: `
- from:
    uri: timer:t
    steps:
      - setBody: {jsonpath: "$.a"}
      - filter: {expression: {groovy: "true"}}
      - setHeader: {name: h, expression: {language: {language: xquery, expression: "."}}}
      - setBody: {simple: "x"}
`, deps: []string{"camel:groovy", "camel:jsonpath", "camel:saxon"}},
		{name: "the bean EIP and a dead letter channel need their components", lang: camelv1.LanguageYAML, src: `
- errorHandler:
    deadLetterChannel:
      deadLetterUri: "jms:queue:dead"
- from: {uri: timer:t, steps: [{bean: {ref: greeter}}]}
`, deps: []string{"camel:bean", "camel:jms"}},
		{name: "a constant enrich names its endpoint", lang: camelv1.LanguageYAML, src: `
- from: {uri: timer:t, steps: [{enrich: {expression: {constant: "http://example.org"}}}]}
`, deps: []string{"camel:http"}},
		{name: "the dataformat component names its data format", lang: camelv1.LanguageYAML, src: `
- from: {uri: timer:t, steps: [{to: "dataformat:jackson:marshal"}]}
`, deps: []string{"camel:dataformat", "camel:jackson"}},
	})
}

func TestXMLRoutesNeedTheirComponents(t *testing.T) {
	runSourceCases(t, []sourceCase{
		{name: "uri attributes of from, to and toD need their components", lang: camelv1.LanguageXML, src: `
<routes xmlns="http://camel.apache.org/schema/spring">
  <route>
    <from uri="aws2-s3:bucket"/>
    <to uri="kafka:out"/>
    <toD uri="http://example.org/${header.id}"/>
    <to uri="log:info"/>
    <to uri="kamelet:sink"/>
    <to uri="{{target}}"/>
    <to uri="acme:x"/>
  </route>
</routes>`, deps: []string{"camel:aws2-s3", "camel:http", "camel:kafka"}, unknown: []string{"acme"}},
		{name: "REST, data formats, languages and the bean EIP need their modules", lang: camelv1.LanguageXML, src: `
<camel>
  <bean name="greeter" type="org.acme.Greeter"/>
  <rest path="/x"><get><to uri="direct:x"/></get></rest>
  <route>
    <from uri="direct:x"/>
    <marshal><json library="Gson"/></marshal>
    <setBody><jsonpath>$.a</jsonpath></setBody>
    <setHeader name="h"><language language="groovy">1</language></setHeader>
    <bean ref="greeter"/>
    <enrich><constant>jms:queue:in</constant></enrich>
  </route>
</camel>`, deps: []string{"camel:bean", "camel:direct", "camel:groovy", "camel:gson", "camel:jms", "camel:jsonpath", "camel:rest"}},
		{name: "a bean defined outside routes needs nothing", lang: camelv1.LanguageXML, src: `
<camel><bean name="greeter" type="org.acme.Greeter"/><route><from uri="timer:t"/><to uri="log:x"/></route></camel>`},
	})
}

func TestJavaRoutesNeedTheirComponents(t *testing.T) {
	runSourceCases(t, []sourceCase{
		{name: "from, to and the EIPs that send need their components", lang: camelv1.LanguageJava, src: `
import org.apache.camel.builder.RouteBuilder;
public class Routes extends RouteBuilder {
  public void configure() {
    errorHandler(deadLetterChannel("seda:dead"));
    from("kafka:orders")
      .to("jms:queue:orders")
      .toD("https://example.org/${header.id}")
      .toF("aws2-s3:%s", bucket)
      .enrich("direct:enrich")
      .pollEnrich("file:inbox")
      .wireTap("log:tap")
      .to("kamelet:sink")
      .to("{{target}}")
      .to("acme:x");
    fromF("sql:%s", query).to("timer:nonsense");
  }
}`, deps: []string{"camel:aws2-s3", "camel:direct", "camel:file", "camel:http", "camel:jms", "camel:kafka", "camel:seda", "camel:sql"},
			unknown: []string{"acme"}},
		{name: "rest() needs the rest component", lang: camelv1.LanguageJava, src: `
public class Api extends RouteBuilder {
  public void configure() {
    restConfiguration().port(8080);
    rest("/greet").get().to("direct:greet");
  }
}`, deps: []string{"camel:direct", "camel:rest"}},
		{name: "data formats, languages and beans need their modules", lang: camelv1.LanguageJava, src: `
from("direct:a")
  .marshal().json(JsonLibrary.Gson)
  .unmarshal().json()
  .unmarshal().csv()
  .setBody(jsonpath("$.a"))
  .filter().groovy("true")
  .setHeader("h", language("xquery", "."))
  .setBody(simple("x"))
  .bean(Greeter.class);`,
			deps: []string{"camel:bean", "camel:csv", "camel:direct", "camel:groovy", "camel:gson", "camel:jackson", "camel:jsonpath", "camel:saxon"}},
	})
}

func TestAnIntegrationsSourcesAndFlowsAreAllRead(t *testing.T) {
	it := fixture.Integration("ns", "it", "", 1, "")
	it.Spec.Flows = append(it.Spec.Flows, fixture.Raw(map[string]any{"from": map[string]any{
		"uri": "kafka:in", "steps": []any{map[string]any{"to": "direct:out"}}}}))
	it.Spec.Sources = []camelv1.SourceSpec{
		{Name: "routes.xml", Content: `<routes><route><from uri="jms:queue:a"/><to uri="acme:x"/></route></routes>`},
		{Name: "Routes.java", Content: gzipBase64(t, `from("aws2-s3:b").to("sql:select 1");`), Compression: ptr.To(true)},
		{Name: "Routes.groovy", Content: `from("ftp:host").to("log:x")`},
		{Name: "extra", Language: camelv1.LanguageYAML, RawContent: []byte(`- from: {uri: "seda:s", steps: [{to: "acme:y"}]}`)},
	}
	got, err := Integration(catalog.Camel(), &it.Spec)
	if err != nil {
		t.Fatalf("Integration: %v", err)
	}
	want := []string{"camel:aws2-s3", "camel:direct", "camel:jms", "camel:kafka", "camel:seda", "camel:sql"}
	if !slices.Equal(got.Dependencies, want) {
		t.Errorf("dependencies: got %q, want %q (groovy sources are not read)", got.Dependencies, want)
	}
	if !slices.Equal(got.Unknown, []string{"acme"}) {
		t.Errorf("unknown schemes: got %q, want [acme]", got.Unknown)
	}
}

func TestASourceThatDoesNotParseIsAnErrorAndTheOthersStillCount(t *testing.T) {
	spec := &camelv1.IntegrationSpec{Sources: []camelv1.SourceSpec{
		{Name: "bad.yaml", Content: "- from: [unclosed"},
		{Name: "bad.xml", Content: "<routes><route>"},
		{Name: "good.yaml", Content: `- from: {uri: "kafka:in", steps: [{to: "log:x"}]}`},
	}}
	got, err := Integration(catalog.Camel(), spec)
	if err == nil || !strings.Contains(err.Error(), "source bad.yaml") || !strings.Contains(err.Error(), "source bad.xml") {
		t.Errorf("error: got %v, want one naming bad.yaml and bad.xml", err)
	}
	if !slices.Equal(got.Dependencies, []string{"camel:kafka"}) {
		t.Errorf("dependencies: got %q, want [camel:kafka]", got.Dependencies)
	}
}

func TestAnIntegrationWithRuntimeComponentsOnlyNeedsNothing(t *testing.T) {
	it := fixture.Integration("ns", "it", "", 1, "")
	got, err := Integration(catalog.Camel(), &it.Spec)
	if err != nil || got.Dependencies != nil || got.Unknown != nil {
		t.Errorf("got %+v, %v; want nothing", got, err)
	}
}

func gzipBase64(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

func TestRoutesServeHTTPWhenTheyConsumeFromTheRuntimesServer(t *testing.T) {
	cases := []struct {
		name  string
		lang  camelv1.Language
		src   string
		serve bool
	}{
		{name: "a YAML platform-http consumer", lang: camelv1.LanguageYAML,
			src: "- from:\n    uri: platform-http:/hello\n    steps:\n      - to: log:x\n", serve: true},
		{name: "a YAML route whose from is a string", lang: camelv1.LanguageYAML,
			src: "- route:\n    from: rest:get:/hello\n", serve: true},
		{name: "the YAML REST DSL", lang: camelv1.LanguageYAML,
			src: "- rest:\n    get:\n      - path: /hello\n        to: direct:hello\n", serve: true},
		{name: "a YAML producer to an HTTP endpoint serves nothing", lang: camelv1.LanguageYAML,
			src: "- from:\n    uri: timer:tick\n    steps:\n      - to: platform-http:/elsewhere\n", serve: false},
		{name: "a Java platform-http consumer", lang: camelv1.LanguageJava,
			src: `from("platform-http:/hello").setBody().constant("hi");`, serve: true},
		{name: "a Java timer route serves nothing", lang: camelv1.LanguageJava,
			src: `from("timer:tick").to("log:x");`, serve: false},
		{name: "an XML platform-http consumer", lang: camelv1.LanguageXML,
			src: `<routes><route><from uri="platform-http:/hello"/><to uri="log:x"/></route></routes>`, serve: true},
		{name: "the XML REST DSL", lang: camelv1.LanguageXML,
			src: `<rests><rest path="/api"><get path="/x"><to uri="direct:x"/></get></rest></rests>`, serve: true},
		{name: "an XML timer route serves nothing", lang: camelv1.LanguageXML,
			src: `<routes><route><from uri="timer:tick"/><to uri="platform-http:/x"/></route></routes>`, serve: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Source(catalog.Camel(), tc.lang, []byte(tc.src))
			if err != nil {
				t.Fatalf("Source: %v", err)
			}
			if got.ServesHTTP != tc.serve {
				t.Errorf("ServesHTTP = %v, want %v", got.ServesHTTP, tc.serve)
			}
		})
	}
}

func TestTheConsumersAreFoundWithTheirYAMLParameters(t *testing.T) {
	got, err := Source(catalog.Camel(), camelv1.LanguageYAML, []byte(
		"- from:\n    uri: timer:hourly\n    parameters:\n      period: 3600000\n      fixedRate: true\n    steps:\n      - to: log:x\n"+
			"- from:\n    uri: direct:in\n    steps:\n      - to: log:y\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Consumers) != 2 || got.Consumers[0].URI != "timer:hourly" || got.Consumers[1].URI != "direct:in" {
		t.Fatalf("consumers %+v", got.Consumers)
	}
	if p := got.Consumers[0].Parameters; p["period"] != "3600000" || p["fixedRate"] != "true" {
		t.Errorf("parameters %v, want period 3600000 written as an integer", p)
	}
}

// TestKebabCaseKeysAreFoundPerSource: the DSL keys of Camel 3's kebab-case, per YAML source and
// flow, each once and sorted; the option keys of parameters and properties, Kamelets' property
// descriptors and Java or XML sources are not keys of the DSL. The error names each key with its
// camelCase spelling.
func TestKebabCaseKeysAreFoundPerSource(t *testing.T) {
	spec := &camelv1.IntegrationSpec{
		Sources: []camelv1.SourceSpec{
			{Name: "old.yaml", Content: `- from:
    uri: timer:tick
    parameters: {repeat-count: 1}
    steps:
    - set-body: {constant: hi}
    - set-body: {constant: again}
    - to-d: "log:${body}"
- route-configuration:
    on-exception:
    - on-exception: {exception: [java.lang.Exception]}`},
			{Name: "new.yaml", Content: `- from: {uri: "timer:t", steps: [{setBody: {constant: hi}}, {toD: "log:x"}]}
- beans: [{name: b, type: "#class:Acme", properties: {some-field: 1}}]`},
			{Name: "my-kamelet.kamelet.yaml", Content: `apiVersion: camel.apache.org/v1
kind: Kamelet
metadata: {name: my-kamelet}
spec:
  definition: {properties: {period: {type: integer, x-descriptors: [a]}}}
  template: {from: {uri: "timer:x", steps: [{to: "kamelet:sink"}]}}`},
			{Name: "Routes.java", Content: `from("timer:x").setBody().constant("set-body:")`},
		},
		Flows: []camelv1.RawObject{fixture.Raw(map[string]any{"from": map[string]any{"uri": "timer:f",
			"steps": []any{map[string]any{"remove-header": map[string]any{"name": "x"}}}}})},
	}
	got, err := Integration(catalog.Camel(), spec)
	if err != nil {
		t.Fatal(err)
	}
	want := []KebabCase{
		{Where: "source old.yaml", Keys: []string{"on-exception", "route-configuration", "set-body", "to-d"}},
		{Where: "spec.flows[0]", Keys: []string{"remove-header"}},
	}
	if !reflect.DeepEqual(got.KebabCase, want) {
		t.Fatalf("got %+v, want %+v", got.KebabCase, want)
	}
	msg := got.KebabCaseError().Error()
	for _, part := range []string{"Camel " + catalog.Camel().CamelVersion + " reads no kebab-case keys",
		"source old.yaml: on-exception (write onException), route-configuration (write routeConfiguration), set-body (write setBody), to-d (write toD)",
		"spec.flows[0]: remove-header (write removeHeader)"} {
		if !strings.Contains(msg, part) {
			t.Errorf("the error lacks %q:\n%s", part, msg)
		}
	}
	if (Result{}).KebabCaseError() != nil {
		t.Error("no kebab-case key, and an error")
	}
}

func TestTheVersionsOfAKameletTheRoutesNameAreRead(t *testing.T) {
	spec := &camelv1.IntegrationSpec{Flows: []camelv1.RawObject{fixture.Raw(map[string]any{"from": map[string]any{
		"uri":   "kamelet:timer-source?message=hi&kameletVersion=v2",
		"steps": []any{map[string]any{"to": "kamelet:log-sink"}, map[string]any{"kamelet": map[string]any{"name": "set-body-action?kameletVersion=v1"}}}}})}}
	r, err := Integration(catalog.Camel(), spec)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"timer-source": {"v2"}, "set-body-action": {"v1"}}
	if !reflect.DeepEqual(r.KameletVersions, want) {
		t.Errorf("KameletVersions %v, want %v", r.KameletVersions, want)
	}
}
