// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package modeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name    string
		file    string
		content string
		want    []Option
	}{
		{
			name:    "a Java line comment gives its options",
			file:    "Route.java",
			content: "// camel-k: dependency=mvn:org.apache.commons:commons-lang3:3.17.0\nimport x;\n",
			want:    []Option{{Name: "dependency", Value: "mvn:org.apache.commons:commons-lang3:3.17.0", Line: 1}},
		},
		{
			name:    "several options on one line are split at spaces, however many",
			file:    "Route.groovy",
			content: "//     camel-k: dependency=camel:http    trait=container.port=8080\tforce",
			want: []Option{
				{Name: "dependency", Value: "camel:http", Line: 1},
				{Name: "trait", Value: "container.port=8080", Line: 1},
				{Name: "force", Line: 1},
			},
		},
		{
			name:    "spaces around camel-k and its colon are allowed, and none after the colon",
			file:    "route.js",
			content: "//camel-k :name=a\n  \t// camel-k:label=x=y",
			want:    []Option{{Name: "name", Value: "a", Line: 1}, {Name: "label", Value: "x=y", Line: 2}},
		},
		{
			name: "modelines count on any line, after code too, in order",
			file: "Route.java",
			content: "import org.apache.camel.builder.RouteBuilder;\n\n" +
				"// camel-k: dependency=camel:http\n" +
				"public class Route extends RouteBuilder {\n" +
				"    // camel-k: property=a=1\n" +
				"}\n",
			want: []Option{{Name: "dependency", Value: "camel:http", Line: 3}, {Name: "property", Value: "a=1", Line: 5}},
		},
		{
			name: "comments that are not modelines are ignored",
			file: "Route.java",
			content: "// camel-kafka: not=this\n// a camel-k: route\n/* camel-k: block=comment */\n" +
				"from(\"x\"); // camel-k: trailing=comment\n// camel-k without a colon\n",
		},
		{
			name:    "in Java a hash comment is not a modeline",
			file:    "Route.java",
			content: "# camel-k: name=a\n",
		},
		{
			name:    "a YAML comment gives its options, with one or more hashes",
			file:    "routes.yaml",
			content: "# camel-k: property=my.message=hi trait=container.port=8080\n### camel-k : name=x\n- from:\n    uri: timer:x\n",
			want: []Option{
				{Name: "property", Value: "my.message=hi", Line: 1},
				{Name: "trait", Value: "container.port=8080", Line: 1},
				{Name: "name", Value: "x", Line: 2},
			},
		},
		{
			name:    "a .yml file reads as YAML, and slashes are not its comments",
			file:    "routes.yml",
			content: "// camel-k: name=no\n  # camel-k: name=yes\n",
			want:    []Option{{Name: "name", Value: "yes", Line: 2}},
		},
		{
			name:    "a properties file takes hash comments",
			file:    "app.properties",
			content: "# camel-k: property=my.key=value\nmy.other=1\n",
			want:    []Option{{Name: "property", Value: "my.key=value", Line: 1}},
		},
		{
			name: "an XML comment gives its options, anywhere on a line",
			file: "routes.xml",
			content: "<?xml version=\"1.0\"?>\n<!-- camel-k: dependency=camel:http -->\n" +
				"<routes><!--camel-k : name=x trait=container.port=8080--></routes>\n" +
				"<!-- a comment --> <!-- camel-k: label=a=b -->\n",
			want: []Option{
				{Name: "dependency", Value: "camel:http", Line: 2},
				{Name: "name", Value: "x", Line: 3},
				{Name: "trait", Value: "container.port=8080", Line: 3},
				{Name: "label", Value: "a=b", Line: 4},
			},
		},
		{
			name:    "in XML other comment syntaxes are not modelines",
			file:    "routes.xml",
			content: "# camel-k: name=a\n// camel-k: name=b\n<!-- camel-kafka: x -->\n<!-- multi\n camel-k: name=c -->\n",
		},
		{
			name:    "quotes keep spaces in a value, and are dropped",
			file:    "Route.java",
			content: `// camel-k: property="my.message=hello world" 'trait=jvm.options=-Xss1m -Dx=1' env=A=it\'s`,
			want: []Option{
				{Name: "property", Value: "my.message=hello world", Line: 1},
				{Name: "trait", Value: "jvm.options=-Xss1m -Dx=1", Line: 1},
				{Name: "env", Value: "A=it's", Line: 1},
			},
		},
		{
			name:    "double quotes unescape quotes and backslashes, single quotes nothing",
			file:    "Route.java",
			content: `// camel-k: property=a="say \"hi\" \\ \n" property=b='\"'`,
			want: []Option{
				{Name: "property", Value: `a=say "hi" \ \n`, Line: 1},
				{Name: "property", Value: `b=\"`, Line: 1},
			},
		},
		{
			name:    "a repeated option is kept each time",
			file:    "Route.kts",
			content: "// camel-k: dependency=camel:http\n// camel-k: dependency=camel:jackson dependency=camel:http",
			want: []Option{
				{Name: "dependency", Value: "camel:http", Line: 1},
				{Name: "dependency", Value: "camel:jackson", Line: 2},
				{Name: "dependency", Value: "camel:http", Line: 2},
			},
		},
		{
			name:    "Windows line ends are not part of a value",
			file:    "Route.java",
			content: "// camel-k: name=a\r\n// camel-k: force\r\n",
			want:    []Option{{Name: "name", Value: "a", Line: 1}, {Name: "force", Line: 2}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.file, []byte(tc.content))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseRefusesMalformedModelines(t *testing.T) {
	cases := []struct {
		name    string
		file    string
		content string
		wantErr string
	}{
		{name: "an unclosed double quote is refused with its file and line", file: "dir/Route.java",
			content: "import x;\n// camel-k: property=\"a=b\n", wantErr: `dir/Route.java:2: malformed modeline: a double quote is not closed`},
		{name: "an unclosed single quote is refused", file: "routes.yaml",
			content: "# camel-k: property='a=b", wantErr: `routes.yaml:1: malformed modeline: a single quote is not closed`},
		{name: "a modeline without options is refused", file: "Route.java",
			content: "// camel-k:   \n", wantErr: `Route.java:1: malformed modeline: no options after "camel-k:"`},
		{name: "an option without a name is refused", file: "Route.java",
			content: "// camel-k: =camel:http", wantErr: `Route.java:1: malformed modeline: "=camel:http" has no option name before '='`},
		{name: "an option written with dashes is refused", file: "Route.java",
			content: "// camel-k: --dependency=camel:http", wantErr: `write option names without dashes`},
		{name: "an option name with other characters is refused", file: "Route.java",
			content: "// camel-k: trait.container=x", wantErr: `"trait.container=x": an option name is letters, digits and '-'`},
		{name: "a trailing backslash is refused", file: "Route.java",
			content: `// camel-k: name=a\`, wantErr: `a backslash ends the line`},
		{name: "an XML modeline that does not close on its line is refused", file: "routes.xml",
			content: "<routes/>\n<!-- camel-k: dependency=camel:http\n-->", wantErr: `routes.xml:2: malformed modeline: an XML modeline must end with "-->" on the same line`},
		{name: "a file type without a modeline syntax is refused", file: "notes.txt",
			content: "# camel-k: name=a", wantErr: `notes.txt: no modeline syntax for files of type ".txt"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.file, []byte(tc.content))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
	t.Run("a malformed modeline is an *Error", func(t *testing.T) {
		_, err := Parse("Route.java", []byte("\n\n// camel-k: 'x"))
		var merr *Error
		if !errors.As(err, &merr) || merr.File != "Route.java" || merr.Line != 3 {
			t.Fatalf("got %#v", err)
		}
	})
}

func TestExpandEnv(t *testing.T) {
	env := map[string]string{"HOST": "db.example.com", "PORT": "5432", "EMPTY": ""}
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	cases := []struct {
		name, value, want, wantErr string
	}{
		{name: "a value without variables is kept", value: "my.key=a b", want: "my.key=a b"},
		{name: "each ${NAME} is replaced", value: "db.url=jdbc:postgresql://${HOST}:${PORT}/x", want: "db.url=jdbc:postgresql://db.example.com:5432/x"},
		{name: "{{env:NAME}} is left for the runtime", value: "db.host={{env:HOST}}", want: "db.host={{env:HOST}}"},
		{name: "an unset variable is refused", value: "a=${NOPE}", wantErr: "environment variable NOPE is not set"},
		{name: "an empty variable is refused", value: "a=${EMPTY}", wantErr: "environment variable EMPTY is not set"},
		{name: "an unclosed ${ is refused", value: "a=${HOST", wantErr: "${ is not closed by }"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ExpandEnv(tc.value, lookup)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want an error containing %q, got %q, %v", tc.wantErr, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v, want %q", got, err, tc.want)
			}
		})
	}
}
