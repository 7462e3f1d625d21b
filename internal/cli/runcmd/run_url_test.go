package runcmd

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caravan-dev/caravan/internal/cli/clitest"
)

func TestRunFetchesRouteFilesGivenAsURLs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/routes/Lang3.java" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("// camel-k: dependency=mvn:org.apache.commons:commons-lang3:3.17.0\n" +
			"public class Lang3 extends org.apache.camel.builder.RouteBuilder {\n" +
			"    public void configure() { from(\"timer:t\").to(\"log:l\"); }\n}\n"))
	}))
	defer srv.Close()
	out, errOut, err := clitest.ExecMutateCommand(t, NewCmdRun, append([]string{"run", srv.URL + "/routes/Lang3.java", "-n", "apps", "-o", "yaml"}, clitest.Unreachable...)...)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	for _, want := range []string{"name: lang3\n", "name: Lang3.java\n", "- mvn:org.apache.commons:commons-lang3:3.17.0\n", `from("timer:t")`} {
		if !strings.Contains(out, want) {
			t.Errorf("the Integration lacks %q:\n%s", want, out)
		}
	}
	for _, tc := range []struct{ file, want string }{
		{srv.URL + "/routes/missing.yaml", "the server answered 404 Not Found"},
		{srv.URL + "/", "the URL names no file"},
		{"github:apache/camel-k-examples/generic-examples/languages/routes.yaml", "give the https URL of the raw file"},
	} {
		_, _, err := clitest.ExecMutateCommand(t, NewCmdRun, append([]string{"run", tc.file, "-n", "apps", "-o", "yaml"}, clitest.Unreachable...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.file, err, tc.want)
		}
	}
}
