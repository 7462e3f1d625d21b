package runcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/cli/clitest"
	"github.com/caravan-dev/caravan/internal/command"
)

func TestNameFromFile(t *testing.T) {
	cases := map[string]string{
		"routes.yaml":                    "routes",
		"dir/MyRoute.java":               "my-route",
		"MyHTTPRoute.java":               "my-http-route",
		"myHTTPRoute.groovy":             "my-http-route",
		"route2Kafka.xml":                "route2-kafka",
		"my_route v2.yaml":               "my-route-v2",
		"Routes.camel.yaml":              "routes-camel",
		"--odd--.js":                     "odd",
		strings.Repeat("a", 70) + ".kts": strings.Repeat("a", 63),
	}
	for file, want := range cases {
		if got := nameFromFile(file); got != want {
			t.Errorf("nameFromFile(%q) = %q, want %q", file, got, want)
		}
	}
}

func TestNameFromImage(t *testing.T) {
	cases := map[string]string{
		"quay.io/me/orders:2.3":                    "orders",
		"localhost:5000/team/Orders_App":           "orders-app",
		"orders@sha256:" + strings.Repeat("a", 64): "orders",
		"registry:5000/a/b/c:1@sha256:abc":         "c",
		":1":                                       "",
	}
	for image, want := range cases {
		if got := nameFromImage(image); got != want {
			t.Errorf("nameFromImage(%q) = %q, want %q", image, got, want)
		}
	}
}

func TestRunAPreBuiltImageWithoutFiles(t *testing.T) {
	out, errOut, err := clitest.ExecMutateCommand(t, NewCmdRun, append([]string{"run", "--image", "quay.io/me/orders:2.3",
		"-n", "apps", "-x", "tenant-a", "-p", "greeting=hello", "--dry-run", "-o", "yaml"}, clitest.Unreachable...)...)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	clitest.AssertGolden(t, "run/sourceless.golden.yaml", out)
}

func TestLoadRunFiles(t *testing.T) {
	dir := filepath.Join("testdata", "run")
	path := func(name string) string { return filepath.Join(dir, name) }
	t.Run("a YAML list of routes becomes flows", func(t *testing.T) {
		sources, flows, err := loadRunFiles([]string{path("routes.yaml")})
		if err != nil {
			t.Fatal(err)
		}
		if len(sources) != 0 || len(flows) != 1 {
			t.Fatalf("got %d sources and %d flows", len(sources), len(flows))
		}
		var flow map[string]map[string]any
		if err := json.Unmarshal(flows[0].Raw, &flow); err != nil || flow["from"]["uri"] != "timer:tick" {
			t.Fatalf("got flow %s (%v)", flows[0].Raw, err)
		}
	})
	t.Run("YAML of another shape and other languages become sources named by file", func(t *testing.T) {
		sources, flows, err := loadRunFiles([]string{path("rest-config.yaml"), path("Hello.java")})
		if err != nil {
			t.Fatal(err)
		}
		if len(flows) != 0 || len(sources) != 2 {
			t.Fatalf("got %d sources and %d flows", len(sources), len(flows))
		}
		want := []struct {
			name string
			lang camelv1.Language
		}{{"rest-config.yaml", camelv1.LanguageYAML}, {"Hello.java", camelv1.LanguageJava}}
		for i, w := range want {
			if sources[i].Name != w.name || sources[i].Language != w.lang || sources[i].Content == "" {
				t.Errorf("source %d: got %s (%s, %d bytes), want %s (%s)", i, sources[i].Name, sources[i].Language, len(sources[i].Content), w.name, w.lang)
			}
		}
	})
	errCases := []struct {
		name    string
		files   []string
		wantErr string
	}{
		{name: "an unknown extension is refused, listing the known ones", files: []string{path("route.txt")},
			wantErr: `unknown file type ".txt": use one of .java, .xml, .yaml, .yml`},
		{name: "a language the runtime cannot load is refused, saying which it loads", files: []string{path("route.groovy")},
			wantErr: "route.groovy: the runtime (camel-main with the YAML, XML and Java DSLs) has no loader for groovy sources"},
		{name: "a missing file is refused", files: []string{path("missing.java")}, wantErr: "reading testdata/run/missing.java"},
		{name: "a YAML file that does not parse is refused", files: []string{path("broken.yaml")}, wantErr: "broken.yaml: not valid YAML"},
		{name: "an empty file is refused", files: []string{path("empty.xml")}, wantErr: "empty.xml is empty"},
		{name: "two sources with the same file name are refused", files: []string{path("Hello.java"), "testdata/run/../run/Hello.java"},
			wantErr: "have the same file name Hello.java"},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := loadRunFiles(tc.files)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}

func TestRunDryRunPrintsTheIntegration(t *testing.T) {
	args := append([]string{"run", "testdata/run/routes.yaml", "testdata/run/Hello.java", "-n", "apps",
		"-x", "tenant-a", "--image", "example/app:1", "-t", "container.port=8080", "-t", "service.enabled=true",
		"-p", "greeting=hello", "--replicas", "2", "--dry-run"}, clitest.Unreachable...)
	for _, format := range []string{"yaml", "json"} {
		t.Run(format, func(t *testing.T) {
			out, errOut, err := clitest.ExecMutateCommand(t, NewCmdRun, append(args, "-o", format)...)
			if err != nil {
				t.Fatalf("%v: %s", err, errOut)
			}
			clitest.AssertGolden(t, "run/dry-run.golden."+format, out)
		})
	}
	t.Run("without --image, the dependencies go into the spec, for the kit", func(t *testing.T) {
		out, errOut, err := clitest.ExecMutateCommand(t, NewCmdRun, append([]string{"run", "testdata/run/routes.yaml", "-n", "apps",
			"-d", "camel:http", "-d", "mvn:org.example:lib:1.0", "--dry-run", "-o", "yaml"}, clitest.Unreachable...)...)
		if err != nil {
			t.Fatalf("%v: %s", err, errOut)
		}
		if !strings.Contains(out, "  dependencies:\n  - camel:http\n  - mvn:org.example:lib:1.0\n") {
			t.Fatalf("no dependencies in:\n%s", out)
		}
		out, errOut, err = clitest.ExecMutateCommand(t, NewCmdRun, append([]string{"run", "testdata/run/routes.yaml", "-n", "apps",
			"--maven-repository", "https://repo.example/m2@id=nightly@snapshots", "--dry-run", "-o", "yaml"}, clitest.Unreachable...)...)
		if err != nil || !strings.Contains(out, "  repositories:\n  - https://repo.example/m2@id=nightly@snapshots\n") {
			t.Fatalf("no repositories: %v %s\n%s", err, errOut, out)
		}
	})
	t.Run("without -x there is no annotation, and without -o a line", func(t *testing.T) {
		out, errOut, err := clitest.ExecMutateCommand(t, NewCmdRun, append([]string{"run", "testdata/run/routes.yaml", "-n", "apps", "--dry-run"}, clitest.Unreachable...)...)
		if err != nil {
			t.Fatalf("%v: %s", err, errOut)
		}
		if out != "integration \"routes\" created (dry run)\n" {
			t.Fatalf("got %q", out)
		}
		out, _, err = clitest.ExecMutateCommand(t, NewCmdRun, append([]string{"run", "testdata/run/routes.yaml", "-n", "apps", "--dry-run", "-o", "yaml"}, clitest.Unreachable...)...)
		if err != nil || strings.Contains(out, "annotations") || !strings.Contains(out, "name: routes\n") {
			t.Fatalf("got %v:\n%s", err, out)
		}
	})
}

func TestRunTakesKamelsFlagsAndPrintsWithOutputAlone(t *testing.T) {
	out, errOut, err := clitest.ExecMutateCommand(t, NewCmdRun, append([]string{"run", "testdata/run/routes.yaml", "-n", "apps",
		"--config", "configmap:app-config", "--config", "file:testdata/run/app.properties",
		"--resource", "secret:certs/tls.crt@/etc/tls/tls.crt", "-e", "TZ=UTC", "-v", "data:/var/data",
		"-p", "count=7", "-p", "file:testdata/run/app.properties", "-p", "extra=1",
		"--label", "team=orders", "--annotation", "example.com/owner=ops", "-o", "json"}, clitest.Unreachable...)...)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	it := &camelv1.Integration{}
	if err := json.Unmarshal([]byte(out), it); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	want := map[string]string{
		"mount":       `{"configs":["configmap:app-config"],"resources":["secret:certs/tls.crt@/etc/tls/tls.crt"],"volumes":["data:/var/data"]}`,
		"environment": `{"vars":["TZ=UTC"]}`,
		// As kamel: a single -p wins over the same key of a file, whatever the order; a key is written once.
		"camel": `{"properties":["greeting=hello from a file","count=7","extra=1"]}`,
	}
	for name, raw := range want {
		var got bytes.Buffer
		if err := json.Compact(&got, it.Spec.Traits[name].Raw); err != nil || got.String() != raw {
			t.Errorf("trait %s: got %s (%v), want %s", name, got.String(), err, raw)
		}
	}
	if it.Labels["team"] != "orders" || it.Annotations["example.com/owner"] != "ops" {
		t.Errorf("labels %v, annotations %v", it.Labels, it.Annotations)
	}
}

// TestRunPodTemplateBecomesTheIntegrationsTemplate: kamel's --pod-template, from a file or
// inline, lands in spec.template as Camel K's pod template, its fields as written.
func TestRunPodTemplateBecomesTheIntegrationsTemplate(t *testing.T) {
	for _, src := range []string{"testdata/run/pod-template.yaml", `{"volumes":[{"name":"shared","emptyDir":{}}]}`} {
		out, errOut, err := clitest.ExecMutateCommand(t, NewCmdRun, append([]string{"run", "testdata/run/routes.yaml", "-n", "apps",
			"--pod-template", src, "-o", "json"}, clitest.Unreachable...)...)
		if err != nil {
			t.Fatalf("%v: %s", err, errOut)
		}
		it := &camelv1.Integration{}
		if err := json.Unmarshal([]byte(out), it); err != nil || it.Spec.Template == nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		var tpl struct {
			Spec corev1.PodSpec `json:"spec"`
		}
		if err := json.Unmarshal(it.Spec.Template.Raw, &tpl); err != nil || len(tpl.Spec.Volumes) != 1 || tpl.Spec.Volumes[0].Name != "shared" {
			t.Errorf("--pod-template %s: template %s (%v)", src, it.Spec.Template.Raw, err)
		}
		if strings.Contains(string(it.Spec.Template.Raw), `"containers":null`) {
			t.Errorf("the template sets fields it was not given: %s", it.Spec.Template.Raw)
		}
	}
}

func TestRunRefusesBadInputBeforeContactingTheCluster(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "a malformed trait", args: []string{"testdata/run/routes.yaml", "-t", "container.port"}, wantErr: "a trait setting must be TRAIT.KEY=VALUE"},
		{name: "a trait of the wrong type", args: []string{"testdata/run/routes.yaml", "-t", "container.port=http"}, wantErr: "container.port: must be an integer"},
		{name: "a trait Camel K does not have", args: []string{"testdata/run/routes.yaml", "-t", "foo.bar=1"}, wantErr: "trait foo does not exist in catalog"},
		{name: "an image that is no image reference", args: []string{"--image", "UPPER/Case::bad", "--name", "x"},
			wantErr: `--image: invalid image reference "UPPER/Case::bad"`},
		{name: "a dependency that is no Maven coordinate", args: []string{"testdata/run/routes.yaml", "-d", "mvn:"},
			wantErr: `-d mvn:: dependency "mvn:" is not a Maven coordinate`},
		{name: "a dependency of no known form", args: []string{"testdata/run/routes.yaml", "-d", "acme:me/lib"},
			wantErr: "is neither camel:NAME nor mvn:GROUP:ARTIFACT[:VERSION]"},
		{name: "a YAML route of kebab-case keys", args: []string{"testdata/run/kebab.yaml"},
			wantErr: "reads no kebab-case keys, as Camel 3 and older Camel K documentation wrote them: source kebab.yaml: set-body (write setBody)"},
		{name: "a Maven repository that is no URL", args: []string{"testdata/run/routes.yaml", "--maven-repository", "nexus/public"},
			wantErr: `--maven-repository: repository "nexus/public": "nexus/public" is not an http, https or file URL`},
		{name: "a Maven repository of an attribute Camel K does not know", args: []string{"testdata/run/routes.yaml", "--maven-repository", "https://nexus/m2@release"},
			wantErr: `unknown attribute "release"`},
		{name: "a Maven repository for an image", args: []string{"--image", "example/app:1", "--name", "x", "--maven-repository", "https://nexus/m2"},
			wantErr: "--maven-repository is for a kit's build"},
		{name: "a kit with dependencies", args: []string{"testdata/run/routes.yaml", "-k", "kit-abc", "-d", "camel:http"},
			wantErr: "-k/--kit runs an existing kit: it cannot be used with --image or -d/--dependency"},
		{name: "a kit no object can be named", args: []string{"testdata/run/routes.yaml", "-k", "Kit_ABC"}, wantErr: `-k/--kit "Kit_ABC"`},
		{name: "a pod template of fields no pod spec has", args: []string{"testdata/run/routes.yaml", "--pod-template", "containerz: []"},
			wantErr: `--pod-template: not a pod spec: json: unknown field "containerz"`},
		{name: "a pod template that is no object", args: []string{"testdata/run/routes.yaml", "--pod-template", "- a"},
			wantErr: "--pod-template: want a pod spec"},
		{name: "a service account no object can be named", args: []string{"testdata/run/routes.yaml", "--service-account", "Bad_SA"},
			wantErr: `--service-account "Bad_SA"`},
		{name: "an empty operator id", args: []string{"testdata/run/routes.yaml", "-x", ""}, wantErr: "cannot use an empty operator id"},
		{name: "a bad operator id", args: []string{"testdata/run/routes.yaml", "-x", "Tenant_A"}, wantErr: `-x/--operator-id: invalid operator id "Tenant_A"`},
		{name: "a bad name", args: []string{"testdata/run/routes.yaml", "--name", "My.Route"}, wantErr: `invalid integration name "My.Route"`},
		{name: "an unknown output format", args: []string{"testdata/run/routes.yaml", "-o", "wide"}, wantErr: `-o/--output "wide" is not supported`},
		{name: "negative replicas", args: []string{"testdata/run/routes.yaml", "--replicas", "-1"}, wantErr: "--replicas must be 0 or more"},
		{name: "--wait with --dry-run", args: []string{"testdata/run/routes.yaml", "--wait", "--dry-run"}, wantErr: "--wait cannot be used with --dry-run"},
		{name: "--wait with -o", args: []string{"testdata/run/routes.yaml", "--wait", "-o", "yaml"}, wantErr: "--wait cannot be used with --dry-run or -o"},
		{name: "a config that is not a ConfigMap, a Secret or a properties file", args: []string{"testdata/run/routes.yaml", "--config", "file:testdata/run/Hello.java"},
			wantErr: "--config file:testdata/run/Hello.java: only a .properties file is read"},
		{name: "a resource from a file", args: []string{"testdata/run/routes.yaml", "--resource", "file:data.csv"},
			wantErr: "--resource file:data.csv: a file is not uploaded; put it in a ConfigMap"},
		{name: "a missing properties file", args: []string{"testdata/run/routes.yaml", "-p", "file:testdata/run/nope.properties"},
			wantErr: "-p file:testdata/run/nope.properties: open testdata/run/nope.properties"},
		{name: "a volume without a path", args: []string{"testdata/run/routes.yaml", "-v", "data"}, wantErr: "trait mount.volumes[0]: must be CLAIM:PATH"},
		{name: "an env variable without a value", args: []string{"testdata/run/routes.yaml", "-e", "TZ"}, wantErr: "trait environment.vars[0]: must be NAME=value"},
		{name: "a label value the API server refuses", args: []string{"testdata/run/routes.yaml", "--label", "team=a b"}, wantErr: "--label team=a b: a valid label must be"},
		{name: "the operator id as an annotation", args: []string{"testdata/run/routes.yaml", "--annotation", "camel.apache.org/operator.id=b"},
			wantErr: "the operator id is set with -x/--operator-id"},
		{name: "--force without -x", args: []string{"testdata/run/routes.yaml", "--force"}, wantErr: "--force only applies with -x"},
		{name: "a missing file", args: []string{"testdata/run/nope.yaml"}, wantErr: "reading testdata/run/nope.yaml"},
		{name: "dependencies with a pre-built image", args: []string{"testdata/run/routes.yaml", "--image", "example/app:1", "-d", "camel:http"},
			wantErr: "-d/--dependency cannot be used with --image: a pre-built image is run as it is"},
		{name: "no file and no image", args: nil, wantErr: "give the files of the routes to run, or --image"},
		{name: "an image that makes no name", args: []string{"--image", ":1"}, wantErr: `cannot make an integration name from the image ":1": set one with --name`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"run", "-n", "apps"}, tc.args...), clitest.Unreachable...)
			_, _, err := clitest.ExecMutateCommand(t, NewCmdRun, args...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
			if strings.Contains(err.Error(), "127.0.0.1:1") {
				t.Fatalf("the command contacted the cluster: %v", err)
			}
		})
	}
}

func TestRunWaitExitsWithTheCodeOfHowItEnded(t *testing.T) {
	ns := clitest.Cluster(t).Namespace(t)
	c := clitest.WatchClient(t)
	it := clitest.AssignedIntegration(ns, "waited", "op-a")
	clitest.Create(t, it)
	err := waitIntegrationPhase(context.Background(), c, io.Discard, ns, "waited", it.Generation, camelv1.IntegrationPhaseRunning, time.Second)
	if code := command.ExitCode(err); code != command.ExitTimeout || !strings.Contains(err.Error(), "timed out after 1s") {
		t.Fatalf("no status: got %v (exit code %d), want a timeout (%d)", err, code, command.ExitTimeout)
	}
	it.Status.Phase = camelv1.IntegrationPhaseError
	it.Status.ObservedGeneration = it.Generation
	it.Status.Ownership.Owner = "op-a"
	if err := c.Status().Update(context.Background(), it); err != nil {
		t.Fatal(err)
	}
	err = waitIntegrationPhase(context.Background(), c, io.Discard, ns, "waited", it.Generation, camelv1.IntegrationPhaseRunning, time.Minute)
	if code := command.ExitCode(err); code != command.ExitFailed || !strings.Contains(err.Error(), "integration waited failed") {
		t.Fatalf("in Error: got %v (exit code %d), want a failure (%d)", err, code, command.ExitFailed)
	}
}

func TestRunSetsTheServiceAccountAndTheKit(t *testing.T) {
	it, _ := runToIntegration(t, "testdata/run/routes.yaml", "-n", "apps", "--service-account", "orders-sa", "-k", "kit-abc")
	if it.Spec.ServiceAccountName != "orders-sa" {
		t.Errorf("spec.serviceAccountName %q", it.Spec.ServiceAccountName)
	}
	if k := it.Spec.IntegrationKit; k == nil || k.Name != "kit-abc" || k.Kind != "IntegrationKit" {
		t.Errorf("spec.integrationKit %+v", k)
	}
}

func TestRunWarnsOfTraitsThatTakeNoEffect(t *testing.T) {
	_, errOut, err := clitest.ExecMutateCommand(t, NewCmdRun, append([]string{"run", "testdata/run/routes.yaml", "-n", "apps",
		"-t", "jvm.agents=a;http://x/a.jar", "-t", "jolokia.enabled=true", "-p", "quarkus.http.port=8081", "--dry-run"}, clitest.Unreachable...)...)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	for _, want := range []string{"Warning: the Camel K traits jolokia are kept but do nothing", "jvm.agents are kept but do nothing",
		"does not read the Quarkus properties quarkus.http.port"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q does not say %q", errOut, want)
		}
	}
}

// TestRunReadsTheOperatorsPlatformBeforeWarningOfQuarkusKeys: quarkus.* keys are no warning for
// an operator whose platform builds on Camel Quarkus, which reads them; they are for one on camel-main.
func TestRunReadsTheOperatorsPlatformBeforeWarningOfQuarkusKeys(t *testing.T) {
	ns := clitest.Cluster(t).Namespace(t)
	clitest.Create(t, append(clitest.OperatorWithPlatform(ns, "op-q", "quarkus"), clitest.OperatorWithPlatform(ns, "op-m", "")...)...)
	kubeconfig := clitest.Cluster(t).Kubeconfig(t, "admin", "system:masters")
	for id, warns := range map[string]bool{"op-q": false, "op-m": true} {
		_, errOut, err := clitest.ExecMutateCommand(t, NewCmdRun, "run", "testdata/run/routes.yaml", "--kubeconfig", kubeconfig, "-n", ns,
			"-x", id, "-p", "quarkus.http.port=8081", "--dry-run=server")
		if err != nil {
			t.Fatalf("%v: %s", err, errOut)
		}
		if got := strings.Contains(errOut, "does not read the Quarkus properties quarkus.http.port"); got != warns {
			t.Errorf("on %s, stderr %q: warned %v, want %v", id, errOut, got, warns)
		}
	}
}
