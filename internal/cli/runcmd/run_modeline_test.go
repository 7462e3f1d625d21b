// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package runcmd

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/cli/clitest"
)

// runToIntegration runs `caravan run ARGS -o json` without a cluster and returns the
// Integration it prints and what it said on stderr.
func runToIntegration(t *testing.T, args ...string) (*camelv1.Integration, string) {
	t.Helper()
	args = append(append(append([]string{"run"}, args...), "-o", "json"), clitest.Unreachable...)
	out, errOut, err := clitest.ExecMutateCommand(t, NewCmdRun, args...)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	it := &camelv1.Integration{}
	if err := json.Unmarshal([]byte(out), it); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	return it, errOut
}

// traitJSON is the compact JSON of one trait of it, or "" without it.
func traitJSON(t *testing.T, it *camelv1.Integration, name string) string {
	t.Helper()
	raw, ok := it.Spec.Traits[name]
	if !ok {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw.Raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// writeSource writes a route file into a fresh directory and returns its path.
func writeSource(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunAppliesModelines(t *testing.T) {
	t.Run("a Java modeline's dependency goes into spec.dependencies", func(t *testing.T) {
		it, errOut := runToIntegration(t, "testdata/run/modeline/Lang3.java", "-n", "apps")
		if want := []string{"mvn:org.apache.commons:commons-lang3:3.17.0"}; !slices.Equal(it.Spec.Dependencies, want) {
			t.Fatalf("dependencies %v, want %v", it.Spec.Dependencies, want)
		}
		if !strings.Contains(errOut, "Lang3.java: modeline options --dependency=mvn:org.apache.commons:commons-lang3:3.17.0") {
			t.Fatalf("stderr does not say what the modeline applied: %q", errOut)
		}
	})
	t.Run("a YAML modeline sets a property and a trait", func(t *testing.T) {
		it, _ := runToIntegration(t, "testdata/run/modeline/greeting.yaml", "-n", "apps")
		if got := traitJSON(t, it, "camel"); got != `{"properties":["my.message=hi"]}` {
			t.Errorf("camel trait %s", got)
		}
		if got := traitJSON(t, it, "container"); got != `{"port":8080}` {
			t.Errorf("container trait %s", got)
		}
		if len(it.Spec.Flows) != 1 {
			t.Errorf("got %d flows, want the file's route", len(it.Spec.Flows))
		}
	})
	t.Run("an XML modeline sets a dependency, a properties file beside it, a label and a quoted annotation", func(t *testing.T) {
		it, _ := runToIntegration(t, "testdata/run/modeline/http.xml", "-n", "apps")
		if !slices.Equal(it.Spec.Dependencies, []string{"camel:http"}) {
			t.Errorf("dependencies %v", it.Spec.Dependencies)
		}
		if got := traitJSON(t, it, "camel"); got != `{"properties":["target.url=http://example.com/ping"]}` {
			t.Errorf("camel trait %s", got)
		}
		if it.Labels["team"] != "orders" || it.Annotations["example.com/note"] != "from a modeline" {
			t.Errorf("labels %v, annotations %v", it.Labels, it.Annotations)
		}
	})
	t.Run("list flags are appended after the command line's, file by file, each value once", func(t *testing.T) {
		again := writeSource(t, "Again.java", "// camel-k: dependency=camel:http d=camel:jackson\nclass Again {}\n")
		it, _ := runToIntegration(t, "-d", "camel:kafka", "testdata/run/modeline/http.xml", again, "-n", "apps")
		if want := []string{"camel:kafka", "camel:http", "camel:jackson"}; !slices.Equal(it.Spec.Dependencies, want) {
			t.Fatalf("dependencies %v, want %v", it.Spec.Dependencies, want)
		}
	})
	t.Run("a property or trait key the command line gives wins over the modeline's", func(t *testing.T) {
		it, errOut := runToIntegration(t, "testdata/run/modeline/greeting.yaml", "-n", "apps",
			"-p", "my.message=bye", "-t", "container.port=9090")
		if got := traitJSON(t, it, "camel"); got != `{"properties":["my.message=bye"]}` {
			t.Errorf("camel trait %s", got)
		}
		if got := traitJSON(t, it, "container"); got != `{"port":9090}` {
			t.Errorf("container trait %s", got)
		}
		if !strings.Contains(errOut, "greeting.yaml:1: modeline property=my.message=hi skipped: the command line sets my.message") {
			t.Errorf("stderr does not say the modeline's property was skipped: %q", errOut)
		}
	})
	t.Run("a single-valued flag the command line sets wins over the modeline's", func(t *testing.T) {
		src := writeSource(t, "Named.java", "// camel-k: name=from-modeline\nclass Named {}\n")
		it, errOut := runToIntegration(t, src, "-n", "apps", "--name", "from-flag")
		if it.Name != "from-flag" || !strings.Contains(errOut, "skipped: the command line sets --name") {
			t.Fatalf("name %q, stderr %q", it.Name, errOut)
		}
		it, _ = runToIntegration(t, src, "-n", "apps")
		if it.Name != "from-modeline" {
			t.Fatalf("name %q, want the modeline's", it.Name)
		}
	})
	t.Run("build properties of a modeline, of a file beside the source, and of the command line go into the builder trait", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "build.properties"), []byte("from.file=1\nshared=file\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		src := filepath.Join(dir, "Quarkus.java")
		if err := os.WriteFile(src, []byte("// camel-k: build-property=quarkus.banner.enabled=false build-property=file:build.properties\nclass Quarkus {}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		it, _ := runToIntegration(t, src, "-n", "apps", "--build-property", "shared=flag")
		if got := traitJSON(t, it, "builder"); got != `{"properties":["from.file=1","shared=flag","quarkus.banner.enabled=false"]}` {
			t.Fatalf("builder trait %s", got)
		}
	})
	t.Run("a boolean option needs no value, and the namespace may come from a modeline", func(t *testing.T) {
		src := writeSource(t, "Built.java", "// camel-k: dont-run-after-build n=team-a replicas=2 language=java\nclass Built {}\n")
		it, _ := runToIntegration(t, src)
		if it.Annotations[camelv1.DontRunAfterBuildAnnotation] != "true" || it.Namespace != "team-a" ||
			it.Spec.Replicas == nil || *it.Spec.Replicas != 2 {
			t.Fatalf("annotations %v, namespace %q, replicas %v", it.Annotations, it.Namespace, it.Spec.Replicas)
		}
	})
	t.Run("${NAME} takes the variable from the environment, {{env:NAME}} is left to the runtime", func(t *testing.T) {
		t.Setenv("CARAVAN_TEST_GREETING", "hello")
		src := writeSource(t, "Env.java", "// camel-k: property=a=${CARAVAN_TEST_GREETING} property=b={{env:HOME}}\nclass Env {}\n")
		it, _ := runToIntegration(t, src, "-n", "apps")
		if got := traitJSON(t, it, "camel"); got != `{"properties":["a=hello","b={{env:HOME}}"]}` {
			t.Fatalf("camel trait %s", got)
		}
	})
}

func TestRunRefusesModelinesItCannotApply(t *testing.T) {
	cases := []struct {
		name    string
		files   map[string]string
		wantErr string
	}{
		{name: "a misspelt option is refused",
			files:   map[string]string{"Typo.java": "// camel-k: dependecy=camel:http\n"},
			wantErr: `Typo.java:1: modeline option "dependecy" is not supported by caravan run`},
		{name: "wait is refused, as kamel does",
			files:   map[string]string{"Wait.java": "// camel-k: wait\n"},
			wantErr: `Wait.java:1: modeline option "wait" is not allowed in a modeline`},
		{name: "output is refused: it changes what the command does",
			files:   map[string]string{"out.yaml": "# camel-k: o=yaml\n- from: {uri: timer:x}\n"},
			wantErr: `out.yaml:1: modeline option "o" is not allowed in a modeline`},
		{name: "help is refused",
			files:   map[string]string{"Help.java": "// camel-k: help\n"},
			wantErr: `Help.java:1: modeline option "help" is not allowed in a modeline`},
		{name: "a connection setting is refused",
			files:   map[string]string{"Server.java": "// camel-k: server=https://example.com\n"},
			wantErr: `Server.java:1: modeline option "server" is not allowed in a modeline: how to reach the cluster`},
		{name: "a malformed modeline is refused with its file and line",
			files:   map[string]string{"Quote.java": "class A {}\n\n// camel-k: property='a=b\n"},
			wantErr: `Quote.java:3: malformed modeline: a single quote is not closed`},
		{name: "an option that needs a value and has none is refused",
			files:   map[string]string{"Name.java": "// camel-k: name\n"},
			wantErr: `Name.java:1: modeline option "name" needs a value: name=VALUE`},
		{name: "a value the flag cannot take is refused",
			files:   map[string]string{"Replicas.java": "// camel-k: replicas=two\n"},
			wantErr: `Replicas.java:1: modeline replicas=two: invalid argument "two" for "--replicas" flag`},
		{name: "an unset environment variable is refused",
			files:   map[string]string{"Env.java": "// camel-k: property=a=${CARAVAN_TEST_UNSET}\n"},
			wantErr: `Env.java:1: modeline option property=a=${CARAVAN_TEST_UNSET}: environment variable CARAVAN_TEST_UNSET is not set`},
		{name: "two modelines that set one name differently are refused",
			files:   map[string]string{"A.java": "// camel-k: name=a\n", "B.java": "// camel-k: name=b\n"},
			wantErr: `B.java:1: modeline name=b conflicts with name=a at `},
		{name: "a properties file the modeline names is read beside the source",
			files:   map[string]string{"Props.java": "// camel-k: property=file:missing.properties\n"},
			wantErr: `-p file:` + "DIR" + `/missing.properties: open`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var files []string
			for _, name := range slices.Sorted(maps.Keys(tc.files)) {
				path := filepath.Join(dir, name)
				if err := os.WriteFile(path, []byte(tc.files[name]), 0o644); err != nil {
					t.Fatal(err)
				}
				files = append(files, path)
			}
			args := append(append([]string{"run", "-n", "apps"}, files...), clitest.Unreachable...)
			_, _, err := clitest.ExecMutateCommand(t, NewCmdRun, args...)
			wantErr := strings.ReplaceAll(tc.wantErr, "DIR", dir)
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Fatalf("want an error containing %q, got %v", wantErr, err)
			}
			if strings.Contains(err.Error(), "127.0.0.1:1") {
				t.Fatalf("the command contacted the cluster: %v", err)
			}
		})
	}
}
