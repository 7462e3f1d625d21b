// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package runcmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caravan-dev/caravan/internal/cli/clitest"
	"github.com/caravan-dev/caravan/internal/trait"
)

// javaProperties uses what Java's properties format has beyond KEY=VALUE lines.
const javaProperties = `# a comment
! another
greeting=caf\u00e9
raw=café
long = one, \
    two
colon:value
spaced value here
a\=b\:c=d
placeholders={{other}} ${x}
trailing=ends\\
`

// TestRunReadsPropertiesFilesAsJavaDoes: a .properties file of -p, of --config and of a
// modeline goes into the camel trait as entries the runtime reads back as Java read the file.
func TestRunReadsPropertiesFilesAsJavaDoes(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.properties"), []byte(javaProperties), 0o600); err != nil {
		t.Fatal(err)
	}
	want := []trait.Property{{Key: "greeting", Value: "café"}, {Key: "raw", Value: "café"}, {Key: "long", Value: "one, two"},
		{Key: "colon", Value: "value"}, {Key: "spaced", Value: "value here"}, {Key: "a=b:c", Value: "d"},
		{Key: "placeholders", Value: "{{other}} ${x}"}, {Key: "trailing", Value: `ends\`}}
	modeline := writeSource(t, "Props.java", "// camel-k: property=file:"+filepath.Join(dir, "app.properties")+"\nclass Props {}\n")
	for name, args := range map[string][]string{
		"-p file:":       {"testdata/run/routes.yaml", "-p", "file:" + filepath.Join(dir, "app.properties")},
		"--config file:": {"testdata/run/routes.yaml", "--config", "file:" + filepath.Join(dir, "app.properties")},
		"a modeline":     {modeline},
	} {
		t.Run(name, func(t *testing.T) {
			it, _ := runToIntegration(t, append(args, "-n", "apps")...)
			if got := camelProperties(t, traitJSON(t, it, "camel")); !slices.Equal(got, want) {
				t.Fatalf("the runtime reads %q\nwant %q", got, want)
			}
		})
	}
	t.Run("a single -p wins over the file's property of the same key as Java reads it", func(t *testing.T) {
		it, _ := runToIntegration(t, "testdata/run/routes.yaml", "-n", "apps",
			"-p", `a\=b\:c = flag`, "-p", "file:"+filepath.Join(dir, "app.properties"))
		got := camelProperties(t, traitJSON(t, it, "camel"))
		if i := slices.IndexFunc(got, func(p trait.Property) bool { return p.Key == "a=b:c" }); i < 0 || got[i].Value != "flag" ||
			slices.ContainsFunc(got[i+1:], func(p trait.Property) bool { return p.Key == "a=b:c" }) {
			t.Fatalf("the runtime reads %q, want a=b:c once, as flag", got)
		}
	})
	t.Run("a -p of the command line wins over a modeline's property of the same key as Java reads it", func(t *testing.T) {
		src := writeSource(t, "Greet.java", "// camel-k: property=greeting=hi\nclass Greet {}\n")
		it, errOut := runToIntegration(t, src, "-n", "apps", "-p", "greeting = bye")
		if got := traitJSON(t, it, "camel"); got != `{"properties":["greeting = bye"]}` {
			t.Fatalf("camel trait %s", got)
		}
		if !strings.Contains(errOut, "modeline property=greeting=hi skipped: the command line sets greeting") {
			t.Fatalf("stderr does not say the modeline's property was skipped: %q", errOut)
		}
	})
}

// TestRunReadsABuildPropertiesFileAsJavaDoes: --build-property file:PATH gives Maven each
// property as Java read it, and refuses a key that Maven's -DKEY=VALUE cannot pass.
func TestRunReadsABuildPropertiesFileAsJavaDoes(t *testing.T) {
	dir := t.TempDir()
	build := filepath.Join(dir, "build.properties")
	if err := os.WriteFile(build, []byte("! tools\npath : C:\\\\tools\nname caf\\u00e9\nflags=-a \\\n  -b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	it, _ := runToIntegration(t, "testdata/run/routes.yaml", "-n", "apps", "--build-property", "file:"+build)
	if got := traitJSON(t, it, "builder"); got != `{"properties":["path=C:\\tools","name=café","flags=-a -b"]}` {
		t.Fatalf("builder trait %s", got)
	}
	if err := os.WriteFile(build, []byte("a\\=b=c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := clitest.ExecMutateCommand(t, NewCmdRun, append([]string{"run", "testdata/run/routes.yaml", "-n", "apps",
		"--build-property", "file:" + build, "-o", "json"}, clitest.Unreachable...)...)
	if err == nil || !strings.Contains(err.Error(), `the key "a=b" holds '='`) {
		t.Fatalf("a key with '=' was passed to Maven: %v: %s", err, errOut)
	}
}

// camelProperties reads a camel trait's entries as the runtime reads its application.properties.
func camelProperties(t *testing.T, camel string) []trait.Property {
	t.Helper()
	var c struct{ Properties []string }
	if err := json.Unmarshal([]byte(camel), &c); err != nil {
		t.Fatalf("%v: %s", err, camel)
	}
	got, err := trait.ParseProperties(strings.Join(c.Properties, "\n"))
	if err != nil {
		t.Fatalf("%v: %q", err, c.Properties)
	}
	return got
}
