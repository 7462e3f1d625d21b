package runcmd

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/cli/clitest"
)

func TestParseEndpoint(t *testing.T) {
	cases := []struct {
		in      string
		want    string
		props   map[string]string
		wantErr string
	}{
		{in: "timer-source", want: `{"ref":{"kind":"Kamelet","name":"timer-source","apiVersion":"camel.apache.org/v1"}}`},
		{in: "kamelet:log-sink", want: `{"ref":{"kind":"Kamelet","name":"log-sink","apiVersion":"camel.apache.org/v1"}}`},
		{in: "integration/receiver", want: `{"ref":{"kind":"Integration","name":"receiver","apiVersion":"camel.apache.org/v1"}}`},
		{in: "log:info", want: `{"uri":"log:info"}`},
		{in: "http://example.com/hook?x=1", want: `{"uri":"http://example.com/hook?x=1"}`},
		{in: "timer-source?message=Hello%20world&period=1000", want: `{"ref":{"kind":"Kamelet","name":"timer-source","apiVersion":"camel.apache.org/v1"}}`,
			props: map[string]string{"message": "Hello world", "period": "1000"}},
		{in: "kamelet:timer-source?period=1000", want: `{"ref":{"kind":"Kamelet","name":"timer-source","apiVersion":"camel.apache.org/v1"}}`,
			props: map[string]string{"period": "1000"}},
		{in: "timer-source?period", wantErr: `inline property "period" must be KEY=VALUE`},
		{in: "timer-source?period=1&period=2", wantErr: `inline property period is set twice`},
		{in: "timer-source?message=%zz", wantErr: `inline property "message=%zz" is not URL-encoded`},
		{in: "integration/Bad_Name", wantErr: `"integration/Bad_Name": invalid integration name`},
		{in: ":info", wantErr: `":info" is not a Camel URI`},
		{in: "Timer Source", wantErr: `"Timer Source" is not an endpoint: use a Kamelet name`},
		{in: "", wantErr: `"" is not an endpoint`},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			e, props, err := parseEndpoint(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
				}
				return
			}
			got, _ := json.Marshal(e)
			if err != nil || string(got) != tc.want || !maps.Equal(props, tc.props) {
				t.Fatalf("got %s %v (%v), want %s %v", got, props, err, tc.want, tc.props)
			}
		})
	}
}

func TestInlinePropertiesJoinThoseOfTheFlagsAndNeverOverrideThem(t *testing.T) {
	spec, err := bindSpec("timer-source?message=hi", "log-sink?showHeaders=true", "", nil, []string{"source.period=1000"})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(spec.Source.Properties.Raw); got != `{"message":"hi","period":"1000"}` {
		t.Errorf("source properties %s", got)
	}
	if got := string(spec.Sink.Properties.Raw); got != `{"showHeaders":"true"}` {
		t.Errorf("sink properties %s", got)
	}
	_, err = bindSpec("timer-source?message=hi", "log-sink", "", nil, []string{"source.message=ho"})
	if err == nil || !strings.Contains(err.Error(), "source: the property message is set both inline and with -p source.message") {
		t.Fatalf("a property set twice: %v", err)
	}
}

func TestBindSpecRoutesPropertiesToTheirEndpoint(t *testing.T) {
	spec, err := bindSpec("timer-source", "log:info", "", []string{"insert-header-action", "kamelet:other-action"}, []string{
		"source.message=hello=world", "source.period=1000", "sink.showHeaders=true", "step-1.name=x", "step-1.value=",
	})
	if err != nil {
		t.Fatal(err)
	}
	props := func(e camelv1.Endpoint) string {
		if e.Properties == nil {
			return ""
		}
		return string(e.Properties.Raw)
	}
	for where, got := range map[string]string{
		"source": props(spec.Source), "sink": props(spec.Sink), "step-0": props(spec.Steps[0]), "step-1": props(spec.Steps[1]),
	} {
		want := map[string]string{
			"source": `{"message":"hello=world","period":"1000"}`,
			"sink":   `{"showHeaders":"true"}`,
			"step-0": "",
			"step-1": `{"name":"x","value":""}`,
		}[where]
		if got != want {
			t.Errorf("%s: got properties %q, want %q", where, got, want)
		}
	}
}

func TestBindSpecRefusesBadProperties(t *testing.T) {
	cases := []struct {
		name    string
		steps   []string
		prop    string
		wantErr string
	}{
		{name: "an unknown endpoint", prop: "middle.x=1", wantErr: `-p middle.x=1: "middle" is not an endpoint: use source, sink, error-handler or step-N`},
		{name: "no endpoint at all", prop: "x=1", wantErr: "-p x=1: a property must be source.KEY=VALUE"},
		{name: "no value", prop: "source.x", wantErr: "a property must be source.KEY=VALUE"},
		{name: "no key", prop: "source.=1", wantErr: "a property must be source.KEY=VALUE"},
		{name: "a step that is not given", steps: []string{"a-step"}, prop: "step-1.x=1", wantErr: "there is no step 1: 1 --step flags give step-0 to step-0"},
		{name: "a step when none is given", prop: "step-0.x=1", wantErr: "there is no step 0: no --step is given"},
		{name: "a step number with a leading zero", steps: []string{"a-step"}, prop: "step-00.x=1", wantErr: `"step-00" is not an endpoint`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := bindSpec("timer-source", "log:info", "", tc.steps, []string{tc.prop})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
	_, err := bindSpec("timer-source", "log:info", "", nil, []string{"source.x=1", "source.x=2"})
	if err == nil || !strings.Contains(err.Error(), "source.x is set twice") {
		t.Fatalf("a property set twice: got %v", err)
	}
	_, err = bindSpec("timer-source", "log:info", "", []string{"Not A Step"}, nil)
	if err == nil || !strings.Contains(err.Error(), "--step 0:") {
		t.Fatalf("a bad step: got %v", err)
	}
}

func TestBindDryRunPrintsTheBinding(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		golden string
	}{
		{name: "a Pipe with a step, properties and an operator",
			args: []string{"timer-source", "log:info", "--step", "insert-header-action",
				"-p", "source.message=hello", "-p", "step-0.name=x", "-p", "step-0.value=y", "-x", "tenant-a", "-o", "yaml"},
			golden: "bind/pipe.golden.yaml"},
		{name: "a KameletBinding to an Integration",
			args:   []string{"timer-source", "integration/receiver", "--kind", "KameletBinding", "--name", "to-receiver", "-o", "json"},
			golden: "bind/kameletbinding.golden.json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"bind", "-n", "apps", "--dry-run"}, tc.args...), clitest.Unreachable...)
			out, errOut, err := clitest.ExecMutateCommand(t, NewCmdBind, args...)
			if err != nil {
				t.Fatalf("%v: %s", err, errOut)
			}
			clitest.AssertGolden(t, tc.golden, out)
		})
	}
	args := append([]string{"bind", "timer-source", "log:info", "-n", "apps", "--dry-run"}, clitest.Unreachable...)
	out, _, err := clitest.ExecMutateCommand(t, NewCmdBind, args...)
	if err != nil || out != "pipe \"timer-source-to-log\" created (dry run)\n" {
		t.Fatalf("the default name: got %q (%v)", out, err)
	}
}

func TestBindRefusesBadFlags(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "an unknown kind", args: []string{"--kind", "Route"}, wantErr: `--kind "Route" is not supported: use Pipe or KameletBinding`},
		{name: "a bad operator id", args: []string{"-x", "-bad"}, wantErr: `invalid operator id "-bad"`},
		{name: "a bad name", args: []string{"--name", "a.b"}, wantErr: `invalid binding name "a.b"`},
		{name: "a bad output", args: []string{"-o", "table"}, wantErr: `-o/--output "table" is not supported`},
		{name: "a bad property", args: []string{"-p", "src.x=1"}, wantErr: `"src" is not an endpoint`},
		{name: "an unknown error handler", args: []string{"--error-handler", "retry"}, wantErr: `--error-handler "retry": use none, log or sink:ENDPOINT`},
		{name: "an error handler sink without an endpoint", args: []string{"--error-handler", "sink:"}, wantErr: "name the endpoint"},
		{name: "an error handler property without its sink", args: []string{"--error-handler", "log", "-p", "error-handler.loggerName=x"},
			wantErr: "-p error-handler.KEY=VALUE sets a property of the endpoint of --error-handler sink:ENDPOINT, which is not given"},
		{name: "an error handler property set inline and with -p", args: []string{"--error-handler", "sink:log-sink?loggerName=a", "-p", "error-handler.loggerName=b"},
			wantErr: "the property loggerName is set both inline and with -p error-handler.loggerName"},
		{name: "a trait Camel K does not have", args: []string{"-t", "foo.bar=1"}, wantErr: "trait foo does not exist in catalog"},
		{name: "the operator id as an annotation", args: []string{"--annotation", "camel.apache.org/operator.id=b"}, wantErr: "the operator id is set with -x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"bind", "timer-source", "log:info", "-n", "apps"}, tc.args...), clitest.Unreachable...)
			_, _, err := clitest.ExecMutateCommand(t, NewCmdBind, args...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}

func TestBindTakesKamelsTraitErrorHandlerAndMetadataFlags(t *testing.T) {
	out, errOut, err := clitest.ExecMutateCommand(t, NewCmdBind, append([]string{"bind", "timer-source", "log-sink", "-n", "apps",
		"-t", "container.port=8080", "--error-handler", "sink:log-sink?showHeaders=true", "-p", "error-handler.loggerName=errors", "--label", "team=a",
		"--annotation", "example.com/owner=ops", "--service-account", "pipes", "-o", "json"}, clitest.Unreachable...)...)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	p := &camelv1.Pipe{}
	if err := json.Unmarshal([]byte(out), p); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	canonical := func(raw []byte) string {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return err.Error()
		}
		data, _ := json.Marshal(v)
		return string(data)
	}
	if got := canonical(p.Spec.Traits["container"].Raw); got != `{"port":8080}` {
		t.Errorf("traits: %s", got)
	}
	if got := canonical(p.Spec.ErrorHandler.Raw); got != `{"sink":{"endpoint":{"properties":{"loggerName":"errors","showHeaders":"true"},"ref":{"apiVersion":"camel.apache.org/v1","kind":"Kamelet","name":"log-sink"}}}}` {
		t.Errorf("error handler: %s", got)
	}
	if p.Spec.ServiceAccountName != "pipes" {
		t.Errorf("service account %q", p.Spec.ServiceAccountName)
	}
	if p.Labels["team"] != "a" || p.Annotations["example.com/owner"] != "ops" {
		t.Errorf("labels %v, annotations %v", p.Labels, p.Annotations)
	}
	for _, h := range []string{"none", "log"} {
		out, _, err := clitest.ExecMutateCommand(t, NewCmdBind, append([]string{"bind", "timer-source", "log-sink", "-n", "apps",
			"--error-handler", h, "-o", "yaml"}, clitest.Unreachable...)...)
		if err != nil || !strings.Contains(out, "errorHandler:\n    "+h+": {}\n") {
			t.Errorf("--error-handler %s: %v\n%s", h, err, out)
		}
	}
}
