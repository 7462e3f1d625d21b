// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package pipe_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/config/kamelets"
	"github.com/caravan-dev/caravan/internal/pipe"
	"github.com/caravan-dev/caravan/internal/trait"
)

// resolver serves the Caravan catalog from the namespace "demo".
type resolver map[string]*camelv1.Kamelet

func (r resolver) Namespace() string { return "demo" }

func (r resolver) Kamelet(name, namespace string) (*camelv1.Kamelet, error) {
	if namespace == "forbidden" {
		return nil, errors.New("the ServiceAccount demo/runner may not get kamelets in namespace forbidden")
	}
	if k, ok := r[name]; ok && namespace == "" {
		return k.DeepCopy(), nil
	}
	return nil, pipe.NotFound(name, "demo", "caravan-system")
}

func catalog(t *testing.T) resolver {
	t.Helper()
	list, err := kamelets.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	r := resolver{}
	for _, k := range list {
		if k.Name == "log-sink" {
			v2 := k.Spec.DeepCopy()
			v2.Template = &camelv1.RawObject{}
			v2.Template.Raw = []byte(`{"from":{"uri":"kamelet:source","steps":[{"to":"log:v2-{{loggerName}}"}]}}`)
			raw, err := json.Marshal(v2)
			if err != nil {
				t.Fatal(err)
			}
			k.Spec.Versions = map[string]camelv1.RawObject{"v2": {}}
			v := k.Spec.Versions["v2"]
			v.Raw = raw
			k.Spec.Versions["v2"] = v
		}
		r[k.Name] = k
	}
	return r
}

func spec(t *testing.T, doc string) camelv1.PipeSpec {
	t.Helper()
	var s camelv1.PipeSpec
	if err := yaml.UnmarshalStrict([]byte(doc), &s); err != nil {
		t.Fatalf("bad test spec: %v", err)
	}
	return s
}

// compiled is what the tests look at in a compiled spec.
type compiled struct {
	flows        []string
	properties   []string
	dependencies []string
	sources      []string
	missing      []string
	out          camelv1.IntegrationSpec
}

func compile(t *testing.T, doc string) (compiled, error) {
	t.Helper()
	result, err := pipe.Compile(spec(t, doc), catalog(t))
	if err != nil {
		return compiled{}, err
	}
	out := result.Spec
	c := compiled{dependencies: out.Dependencies, out: out, missing: result.MissingKamelets}
	for _, f := range out.Flows {
		c.flows = append(c.flows, string(f.Raw))
	}
	traits, err := trait.Parse(out.Traits)
	if err != nil {
		t.Fatalf("the compiled traits do not parse: %v", err)
	}
	c.properties = traits.Camel.Properties()
	for _, s := range out.Sources {
		c.sources = append(c.sources, s.Name)
	}
	return c, nil
}

const timerToLog = `
source:
  ref: {kind: Kamelet, apiVersion: camel.apache.org/v1, name: timer-source}
  properties: {message: hello}
sink:
  ref: {kind: Kamelet, apiVersion: camel.apache.org/v1, name: log-sink}
`

func TestCompile(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		check func(t *testing.T, c compiled)
	}{{
		name: "a timer source bound to a log sink becomes one route between two Kamelet instances",
		doc:  timerToLog,
		check: func(t *testing.T, c compiled) {
			equal(t, "flows", c.flows, []string{
				`{"route":{"from":{"steps":[{"to":"kamelet:log-sink/sink"}],"uri":"kamelet:timer-source/source"},"id":"binding"}}`,
			})
			equal(t, "properties", c.properties, []string{"camel.kamelet.timer-source.source.message=hello"})
			equal(t, "dependencies", c.dependencies, []string{"camel:core", "camel:kamelet", "camel:log", "camel:timer"})
			equal(t, "sources", c.sources, []string{"log-sink.kamelet.yaml", "timer-source.kamelet.yaml"})
		},
	}, {
		name: "a version named of a Kamelet the cluster lacks is dropped, which the missing list says",
		doc: strings.Replace(strings.Replace(timerToLog, "name: log-sink", "name: slack-sink", 1), "kind: Kamelet, apiVersion: camel.apache.org/v1, name: slack-sink}",
			"kind: Kamelet, apiVersion: camel.apache.org/v1, name: slack-sink}\n  properties: {kameletVersion: v2}", 1),
		check: func(t *testing.T, c compiled) {
			equal(t, "missing", c.missing, []string{"slack-sink (whose version v2 the classpath cannot choose: it holds one)"})
			equal(t, "properties", c.properties, []string{"camel.kamelet.timer-source.source.message=hello"})
		},
	}, {
		name: "a Kamelet the cluster lacks is called all the same, its properties as written, for the runtime's classpath",
		doc: strings.Replace(strings.Replace(timerToLog, "name: log-sink", "name: slack-sink", 1), "kind: Kamelet, apiVersion: camel.apache.org/v1, name: slack-sink}",
			"kind: Kamelet, apiVersion: camel.apache.org/v1, name: slack-sink}\n  properties: {channel: \"#ops\", retries: 3, verbose: true}", 1),
		check: func(t *testing.T, c compiled) {
			equal(t, "missing", c.missing, []string{"slack-sink"})
			equal(t, "flows", c.flows, []string{
				`{"route":{"from":{"steps":[{"to":"kamelet:slack-sink/sink"}],"uri":"kamelet:timer-source/source"},"id":"binding"}}`,
			})
			contains(t, "properties", c.properties, "camel.kamelet.slack-sink.sink.channel=#ops")
			contains(t, "properties", c.properties, "camel.kamelet.slack-sink.sink.retries=3")
			contains(t, "properties", c.properties, "camel.kamelet.slack-sink.sink.verbose=true")
			contains(t, "dependencies", c.dependencies, "camel:kamelet")
			equal(t, "sources", c.sources, []string{"timer-source.kamelet.yaml"})
		},
	}, {
		name: "kameletVersion picks a version of the Kamelet, whose spec is mounted, as on Camel K",
		doc:  strings.Replace(timerToLog, "name: log-sink}", "name: log-sink}\n  properties: {kameletVersion: v2, loggerName: audit}", 1),
		check: func(t *testing.T, c compiled) {
			var sink string
			for _, src := range c.out.Sources {
				if src.Name == "log-sink.kamelet.yaml" {
					sink = src.Content
				}
			}
			if !strings.Contains(sink, "log:v2-{{loggerName}}") || strings.Contains(sink, "versions") {
				t.Errorf("the mounted Kamelet is not its v2: %s", sink)
			}
			contains(t, "properties", c.properties, "camel.kamelet.log-sink.sink.loggerName=audit")
			for _, p := range c.properties {
				if strings.Contains(p, "kameletVersion") {
					t.Errorf("the version is passed as a property: %s", p)
				}
			}
		},
	}, {
		name: "an action Kamelet step is called with the kamelet EIP and its own instance id",
		doc: timerToLog + `
steps:
- ref: {kind: Kamelet, apiVersion: camel.apache.org/v1, name: insert-header-action}
  properties: {name: source, value: pipe}
- uri: log:between
`,
		check: func(t *testing.T, c compiled) {
			equal(t, "flows", c.flows, []string{
				`{"route":{"from":{"steps":[{"kamelet":{"name":"insert-header-action/action-0"}},{"to":"log:between"},{"to":"kamelet:log-sink/sink"}],"uri":"kamelet:timer-source/source"},"id":"binding"}}`,
			})
			contains(t, "properties", c.properties, "camel.kamelet.insert-header-action.action-0.name=source")
			contains(t, "properties", c.properties, "camel.kamelet.insert-header-action.action-0.value=pipe")
			contains(t, "sources", c.sources, "insert-header-action.kamelet.yaml")
		},
	}, {
		name: "uri endpoints get their properties as sorted, URL-encoded query parameters",
		doc: `
source:
  uri: timer:tick
  properties: {period: 2000, repeatCount: 3}
sink:
  uri: log:info?level=WARN
  properties: {showAll: true, marker: "a b&c"}
`,
		check: func(t *testing.T, c compiled) {
			equal(t, "flows", c.flows, []string{
				`{"route":{"from":{"steps":[{"to":"log:info?level=WARN\u0026marker=a+b%26c\u0026showAll=true"}],"uri":"timer:tick?period=2000\u0026repeatCount=3"},"id":"binding"}}`,
			})
			equal(t, "properties", c.properties, nil)
			equal(t, "dependencies", c.dependencies, nil)
			equal(t, "sources", c.sources, nil)
		},
	}, {
		name: "a step that refers to an Integration calls its Service over HTTP",
		doc: timerToLog + `
steps:
- ref: {kind: Integration, apiVersion: camel.apache.org/v1, name: enricher}
  properties: {mode: full}
- ref: {kind: Integration, apiVersion: camel.apache.org/v1, name: audit, namespace: ops}
`,
		check: func(t *testing.T, c compiled) {
			equal(t, "flows", c.flows, []string{
				`{"route":{"from":{"steps":[{"to":"http://enricher.demo.svc.cluster.local/?mode=full"},{"to":"http://audit.ops.svc.cluster.local/"},{"to":"kamelet:log-sink/sink"}],"uri":"kamelet:timer-source/source"},"id":"binding"}}`,
			})
			contains(t, "dependencies", c.dependencies, "camel:http")
		},
	}, {
		name: "a required property a mounted configuration may give is left to the runtime, as on Camel K",
		doc:  strings.Replace(timerToLog, "properties: {message: hello}", "", 1) + "traits: {mount: {configs: [\"secret:pipe-defaults\"]}}\n",
		check: func(t *testing.T, c compiled) {
			equal(t, "properties", c.properties, nil)
		},
	}, {
		name: "a required property the base's camel trait gives, as the Kamelet's default or the instance's configuration",
		doc: strings.Replace(timerToLog, "properties: {message: hello}", "", 1) +
			"integration: {traits: {camel: {properties: [camel.kamelet.timer-source.message=hi]}}}\n",
		check: func(t *testing.T, c compiled) {
			equal(t, "properties", c.properties, []string{"camel.kamelet.timer-source.message=hi"})
		},
	}, {
		name: "given values are the instance's properties; defaults are left to the runtime, after the Kamelet's configurations",
		doc: `
source:
  ref: {kind: Kamelet, apiVersion: camel.apache.org/v1, name: timer-source}
  properties: {message: hi, period: "5000"}
sink:
  ref: {kind: Kamelet, apiVersion: camel.apache.org/v1, name: http-sink}
  properties: {url: "https://example.com/a b"}
`,
		check: func(t *testing.T, c compiled) {
			equal(t, "properties", c.properties, []string{
				"camel.kamelet.http-sink.sink.url=https://example.com/a b",
				"camel.kamelet.timer-source.source.message=hi",
				"camel.kamelet.timer-source.source.period=5000",
			})
		},
	}, {
		name: "an id property names the Kamelet instance instead of its position",
		doc: `
source:
  ref: {kind: Kamelet, apiVersion: camel.apache.org/v1, name: timer-source}
  properties: {message: hi, id: ticker}
sink:
  uri: log:info
`,
		check: func(t *testing.T, c compiled) {
			contains(t, "flows", c.flows, `{"route":{"from":{"steps":[{"to":"log:info"}],"uri":"kamelet:timer-source/ticker"},"id":"binding"}}`)
			contains(t, "properties", c.properties, "camel.kamelet.timer-source.ticker.message=hi")
		},
	}, {
		name: "an errorHandler sink becomes a dead letter channel flow before the route",
		doc: timerToLog + `
errorHandler:
  sink:
    endpoint:
      ref: {kind: Kamelet, apiVersion: camel.apache.org/v1, name: log-sink}
      properties: {showHeaders: true}
    parameters: {maximumRedeliveries: 3, redeliveryDelay: 2000, useOriginalMessage: true}
`,
		check: func(t *testing.T, c compiled) {
			equal(t, "first flow", c.flows[:1], []string{
				`{"errorHandler":{"deadLetterChannel":{"deadLetterUri":"kamelet:log-sink/error-handler","redeliveryPolicy":{"maximumRedeliveries":3,"redeliveryDelay":2000},"useOriginalMessage":true}}}`,
			})
			contains(t, "properties", c.properties, "camel.kamelet.log-sink.error-handler.showHeaders=true")
			contains(t, "properties", c.properties, "camel.kamelet.log-sink.error-handler.showHeaders=true")
		},
	}, {
		name: "a log errorHandler becomes the default error handler and none disables it",
		doc: `
source: {uri: "timer:tick"}
sink: {uri: "log:info"}
errorHandler:
  log:
    parameters: {maximumRedeliveries: 1}
`,
		check: func(t *testing.T, c compiled) {
			equal(t, "first flow", c.flows[:1], []string{
				`{"errorHandler":{"defaultErrorHandler":{"redeliveryPolicy":{"maximumRedeliveries":1}}}}`,
			})
		},
	}, {
		name: "a none errorHandler becomes noErrorHandler",
		doc: `
source: {uri: "timer:tick"}
sink: {uri: "log:info"}
errorHandler: {none: null}
`,
		check: func(t *testing.T, c compiled) {
			equal(t, "first flow", c.flows[:1], []string{`{"errorHandler":{"noErrorHandler":{}}}`})
		},
	}, {
		name: "spec.integration is the base: its traits, dependencies and flows are kept around the generated route",
		doc: timerToLog + `
replicas: 2
serviceAccountName: pipes
dependencies: [mvn:org.example:extra:1.0, camel:log]
traits:
  container: {image: example.com/run:1}
integration:
  replicas: 5
  dependencies: [camel:jackson]
  flows:
  - from: {uri: "timer:other", steps: [{to: "log:other"}]}
  sources:
  - {name: Helper.java, content: "class Helper {}"}
  traits:
    camel:
      runtimeVersion: "4.8.0"
      properties: [camel.kamelet.log-sink.sink.showHeaders=true]
    container: {image: example.com/base:1, port: 8081}
`,
		check: func(t *testing.T, c compiled) {
			if len(c.flows) != 2 || !strings.HasPrefix(c.flows[0], `{"route":`) || !strings.Contains(c.flows[1], "timer:other") {
				t.Errorf("flows = %v, want the generated route then the base flow", c.flows)
			}
			equal(t, "properties", c.properties, []string{
				"camel.kamelet.timer-source.source.message=hello",
				"camel.kamelet.log-sink.sink.showHeaders=true",
			})
			equal(t, "dependencies", c.dependencies, []string{
				"camel:core", "camel:jackson", "camel:kamelet", "camel:log", "camel:timer", "mvn:org.example:extra:1.0",
			})
			equal(t, "sources", c.sources, []string{"Helper.java", "log-sink.kamelet.yaml", "timer-source.kamelet.yaml"})
			if *c.out.Replicas != 2 || c.out.ServiceAccountName != "pipes" {
				t.Errorf("replicas = %d, serviceAccountName = %q, want the Pipe's 2 and pipes", *c.out.Replicas, c.out.ServiceAccountName)
			}
			equal(t, "container trait", []string{string(c.out.Traits["container"].Raw)}, []string{`{"image":"example.com/run:1","port":8081}`})
			if !strings.Contains(string(c.out.Traits["camel"].Raw), `"runtimeVersion":"4.8.0"`) {
				t.Errorf("camel trait = %s, want runtimeVersion kept", c.out.Traits["camel"].Raw)
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := compile(t, tt.doc)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			tt.check(t, c)
		})
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string
	}{{
		name: "a missing required property names the endpoint, the Kamelet and the property",
		doc:  strings.Replace(timerToLog, "properties: {message: hello}", "", 1),
		want: []string{`source: kamelet timer-source: missing required property "message": set it in the endpoint's properties, ` +
			"or as camel.kamelet.timer-source.message in a mounted configuration"},
	}, {
		name: "the camel trait's property of another instance does not give it",
		doc: strings.Replace(timerToLog, "properties: {message: hello}", "", 1) +
			"traits: {camel: {properties: [camel.kamelet.timer-source.other.message=hi]}}\n",
		want: []string{`source: kamelet timer-source: missing required property "message"`},
	}, {
		name: "a value of the wrong type names the property and what it must be",
		doc:  strings.Replace(timerToLog, "{message: hello}", "{message: hello, period: abc}", 1),
		want: []string{`source: kamelet timer-source: property "period": must be an integer, got "abc"`},
	}, {
		name: "every faulty endpoint is reported at once",
		doc: `
source: {ref: {kind: Kamelet, apiVersion: camel.apache.org/v1, name: log-sink}}
steps: [{uri: ""}, {ref: {kind: Service, apiVersion: v1, name: web}}]
sink: {ref: {kind: Integration, apiVersion: camel.apache.org/v1, name: x}, uri: "log:info"}
`,
		want: []string{
			"source: kamelet log-sink is a sink Kamelet and cannot be the source",
			"steps[0]: uri is empty",
			`steps[1]: ref apiVersion "v1" is not supported`,
			"sink: set either ref or uri, not both",
		},
	}, {
		name: "an Integration cannot be the source",
		doc:  `{source: {ref: {kind: Integration, name: up}}, sink: {uri: "log:info"}}`,
		want: []string{"source: an Integration cannot be the source"},
	}, {
		name: "the same Kamelet instance cannot be used twice",
		doc: timerToLog + `
steps:
- ref: {kind: Kamelet, apiVersion: camel.apache.org/v1, name: log-sink}
  properties: {id: sink}
`,
		want: []string{`sink: kamelet log-sink with id "sink" is already used by steps[0]`},
	}, {
		name: "an unknown errorHandler parameter is named",
		doc:  timerToLog + `errorHandler: {log: {parameters: {retries: 3}}}`,
		want: []string{`errorHandler.log.parameters: unknown parameter "retries"`},
	}, {
		name: "two error handlers are refused",
		doc:  timerToLog + `errorHandler: {log: {}, none: {}}`,
		want: []string{"errorHandler: set exactly one of none, log or sink"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := pipe.Compile(spec(t, tt.doc), catalog(t))
			if err == nil {
				t.Fatalf("Compile succeeded with %+v, want an error", out)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if len(out.Spec.Flows) > 0 || len(out.Spec.Sources) > 0 || len(out.Spec.Traits) > 0 || out.MissingKamelets != nil {
				t.Errorf("Compile returned output with its error: %+v", out)
			}
		})
	}
}

func TestCompileIsDeterministic(t *testing.T) {
	doc := timerToLog + `
steps:
- ref: {kind: Kamelet, apiVersion: camel.apache.org/v1, name: insert-header-action}
  properties: {name: a, value: b}
- ref: {kind: Kamelet, apiVersion: camel.apache.org/v1, name: insert-header-action}
  properties: {name: c, value: d}
errorHandler: {sink: {endpoint: {uri: "log:dead"}, parameters: {maximumRedeliveries: 2}}}
`
	var first []byte
	for i := range 20 {
		out, err := pipe.Compile(spec(t, doc), catalog(t))
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b
			continue
		}
		if string(b) != string(first) {
			t.Fatalf("run %d differs:\n%s\n%s", i, first, b)
		}
	}
}

func TestKameletSourceIsTheKameletResource(t *testing.T) {
	k := catalog(t)["timer-source"]
	k.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"}
	k.Status.Phase = camelv1.KameletPhaseReady
	data, err := pipe.KameletYAML(k)
	if err != nil {
		t.Fatal(err)
	}
	var back camelv1.Kamelet
	if err := yaml.UnmarshalStrict(data, &back); err != nil {
		t.Fatalf("the source is not a Kamelet: %v\n%s", err, data)
	}
	if back.Name != "timer-source" || back.Labels[camelv1.KameletTypeLabel] != "source" ||
		back.Spec.Template == nil || back.Spec.Definition == nil || len(back.Annotations) > 0 || back.Status.Phase != "" {
		t.Errorf("the source keeps name, type label, definition and template only:\n%s", data)
	}
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s =\n%s\nwant\n%s", what, lines(got), lines(want))
	}
}

func contains(t *testing.T, what string, got []string, want string) {
	t.Helper()
	if !slices.Contains(got, want) {
		t.Errorf("%s =\n%s\nwant it to contain %s", what, lines(got), want)
	}
}

func lines(s []string) string { return fmt.Sprintf("  %s", strings.Join(s, "\n  ")) }

func TestCheckRefusesWhatCompileRefusesWithoutReadingAKamelet(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{name: "Kamelets are not read", doc: timerToLog},
		{name: "an Integration as the sink is called in the namespace",
			doc: `{source: {uri: "timer:t"}, sink: {ref: {kind: Integration, apiVersion: camel.apache.org/v1, name: x}}}`},
		{name: "an Integration cannot be the source",
			doc:  `{source: {ref: {kind: Integration, name: up}}, sink: {ref: {kind: Kamelet, apiVersion: camel.apache.org/v1, name: log-sink}}}`,
			want: []string{"source: an Integration cannot be the source"}},
		{name: "every other fault is named beside an unread Kamelet",
			doc: `
source: {ref: {kind: Kamelet, apiVersion: camel.apache.org/v1, name: timer-source}}
steps: [{uri: ""}]
sink: {ref: {kind: Service, apiVersion: v1, name: web}}
errorHandler: {log: {}, none: {}}
`,
			want: []string{"steps[0]: uri is empty", `sink: ref apiVersion "v1" is not supported`, "errorHandler: set exactly one of none, log or sink"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := pipe.Check(spec(t, tc.doc), "demo")
			if len(tc.want) == 0 && err != nil {
				t.Fatalf("Check: %v", err)
			}
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v does not say %q", err, w)
				}
			}
			if err != nil && strings.Contains(err.Error(), "kamelet not read") {
				t.Errorf("the error names a Kamelet it did not read: %v", err)
			}
		})
	}
}

// TestAKameletsSourcesGoWithIt: as Camel K's kamelets trait does, the sources of a Kamelet's
// spec.sources are mounted after it; a contentRef, an unnamed source and two of one name are
// refused, naming the Kamelet.
func TestAKameletsSourcesGoWithIt(t *testing.T) {
	r := catalog(t)
	r["log-sink"].Spec.Sources = []camelv1.SourceSpec{{Name: "Helper.java", Content: "class Helper {}"}}
	result, err := pipe.Compile(spec(t, timerToLog), r)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range result.Spec.Sources {
		names = append(names, s.Name)
		if s.FromKamelet == nil || !*s.FromKamelet {
			t.Errorf("source %s is not marked as a Kamelet's", s.Name)
		}
	}
	equal(t, "sources", names, []string{"log-sink.kamelet.yaml", "Helper.java", "timer-source.kamelet.yaml"})

	for _, tc := range []struct {
		sources []camelv1.SourceSpec
		want    string
	}{
		{[]camelv1.SourceSpec{{Name: "Helper.java", ContentRef: "helpers"}},
			"kamelet log-sink: spec.sources[0] (Helper.java) takes its content from the ConfigMap helpers"},
		{[]camelv1.SourceSpec{{Content: "class Helper {}"}}, "kamelet log-sink: spec.sources[0] has no name"},
		{[]camelv1.SourceSpec{{Name: "a.java", Content: "x"}, {Name: "a.java", Content: "y"}}, "kamelet log-sink: spec.sources[1]: two sources are named a.java"},
		{[]camelv1.SourceSpec{{Name: "timer-source.kamelet.yaml", Content: "x"}}, "kamelet timer-source: its source timer-source.kamelet.yaml has the name of another Kamelet's source"},
	} {
		r["log-sink"].Spec.Sources = tc.sources
		if _, err := pipe.Compile(spec(t, timerToLog), r); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("sources %v: error %v, want one that says %q", tc.sources, err, tc.want)
		}
	}
}

// TestKameletPropertiesAreEntriesTheRuntimeReadsBack: a property value with leading blanks, a
// backslash and a separator reaches the runtime as written.
func TestKameletPropertiesAreEntriesTheRuntimeReadsBack(t *testing.T) {
	value := `  a\b: c=d`
	c, err := compile(t, strings.Replace(timerToLog, "{message: hello}", `{message: '`+value+`'}`, 1))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, entry := range c.properties {
		props, err := trait.ParseProperties(entry)
		if err != nil || len(props) != 1 {
			t.Fatalf("entry %q reads as %v, %v", entry, props, err)
		}
		if props[0].Key == "camel.kamelet.timer-source.source.message" {
			found = true
			if props[0].Value != value {
				t.Errorf("the message reads back as %q, want %q", props[0].Value, value)
			}
		}
	}
	if !found {
		t.Errorf("no message among %q", c.properties)
	}
}

// TestTheDataTypesOfTheEndpointsAreListedAsIgnored: every data type slot an endpoint names is
// listed, in the binding's order, and the route is the one without them.
func TestTheDataTypesOfTheEndpointsAreListedAsIgnored(t *testing.T) {
	doc := strings.Replace(timerToLog, "properties: {message: hello}", "properties: {message: hello}\n  dataTypes: {out: {format: text-plain}}", 1)
	doc = strings.Replace(doc, "name: log-sink}\n", "name: log-sink}\n  dataTypes: {in: {format: application-octet-stream}}\n", 1)
	result, err := pipe.Compile(spec(t, doc), catalog(t))
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "ignored data types", result.IgnoredDataTypes, []string{"source.dataTypes.out", "sink.dataTypes.in"})
	plain, err := pipe.Compile(spec(t, timerToLog), catalog(t))
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "flows", []string{string(result.Spec.Flows[0].Raw)}, []string{string(plain.Spec.Flows[0].Raw)})
}
