package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caravan-dev/caravan/internal/command"
	"github.com/caravan-dev/caravan/test/harness"
)

// binDir holds the caravan binary built from this tree by TestMain, and kubectl-caravan, a link
// to it that runs it as a kubectl plugin.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

// buildAndRun builds the caravan binary into binDir, runs the tests and removes binDir.
func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "caravan-cli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin, err := harness.BuildCaravan(dir)
	if err == nil {
		err = os.Symlink(bin, filepath.Join(dir, "kubectl-caravan"))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	binDir = dir
	return m.Run()
}

// caravan runs the binary named name in binDir with args, with no kubeconfig, and returns what
// it printed and its exit code.
func caravan(t *testing.T, name string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return caravanWith(t, "", name, args...)
}

// caravanWith runs the binary named name in binDir with args and the kubeconfig file kubeconfig,
// and returns what it printed and its exit code.
func caravanWith(t *testing.T, kubeconfig, name string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBECONFIG="+kubeconfig)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running %s %v: %v", name, args, err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

func TestAMistypedCommandIsRefusedNamingTheCommandsItIsCloseTo(t *testing.T) {
	for _, tc := range []struct {
		binary string
		args   []string
		want   string
	}{
		{"caravan", []string{"lgs"}, "error: unknown command \"lgs\" for \"caravan\"\n\nDid you mean this?\n\tlogs\n"},
		{"caravan", []string{"rn"}, "error: unknown command \"rn\" for \"caravan\"\n\nDid you mean this?\n\trun\n"},
		{"caravan", []string{"kit", "delet"}, "error: unknown command \"delet\" for \"caravan kit\"\n\nDid you mean this?\n\tdelete\n"},
		{"caravan", []string{"nosuchcommand"}, "error: unknown command \"nosuchcommand\" for \"caravan\"\n"},
		{"kubectl-caravan", []string{"lgs"}, "error: unknown command \"lgs\" for \"kubectl caravan\"\n\nDid you mean this?\n\tlogs\n"},
	} {
		stdout, stderr, code := caravan(t, tc.binary, tc.args...)
		if stderr != tc.want || stdout != "" {
			t.Errorf("%s %v printed\n%q on stderr and %q on stdout, want\n%q on stderr", tc.binary, tc.args, stderr, stdout, tc.want)
		}
		if code != command.ExitUsage {
			t.Errorf("%s %v: exit code %d, want %d", tc.binary, tc.args, code, command.ExitUsage)
		}
	}
}

func TestHelpHasKubectlsSectionsWithTheUsageLine(t *testing.T) {
	for _, tc := range []struct {
		binary string
		args   []string
		// sections are what the help must print, in this order.
		sections []string
	}{
		{"caravan", nil, []string{"\nBasic Commands:\n  run ", "\nOther Commands:\n",
			"\nUsage:\n  caravan [command] [options]\n",
			"\nUse \"caravan <command> --help\" for more information about a given command.\n",
			"Use \"caravan options\" for a list of global command-line options (applies to all commands).\n"}},
		{"caravan", []string{"logs"}, []string{"\nAliases:\nlogs, log\n", "\nExamples:\n  # Follow",
			"\nOptions:\n    -c, --container='':\n", "\nUsage:\n  caravan logs NAME [options]\n",
			"Use \"caravan options\" for a list of global command-line options (applies to all commands).\n"}},
		{"caravan", []string{"run"}, []string{"\nExamples:\n", "\nOptions:\n", "\nUsage:\n  caravan run [FILE...] [options]\n"}},
		{"caravan", []string{"bind"}, []string{"\nExamples:\n", "\nOptions:\n", "\nUsage:\n  caravan bind SOURCE SINK [options]\n"}},
		{"caravan", []string{"install"}, []string{"\nOptions:\n", "\nUsage:\n  caravan install [options]\n"}},
		{"caravan", []string{"get"}, []string{"\nExamples:\n", "\nOptions:\n", "\nUsage:\n  caravan get [TYPE] [NAME...] [options]\n"}},
		{"caravan", []string{"describe"}, []string{"\nExamples:\n", "\nUsage:\n  caravan describe TYPE NAME [options]\n"}},
		{"caravan", []string{"kit"}, []string{"\nAvailable Commands:\n  delete ", "\nUsage:\n  caravan kit [command] [options]\n",
			"\nUse \"caravan kit <command> --help\" for more information about a given command.\n"}},
		{"kubectl-caravan", []string{"logs"}, []string{"\nUsage:\n  kubectl caravan logs NAME [options]\n",
			"Use \"kubectl caravan options\" for a list of global command-line options (applies to all commands).\n"}},
	} {
		stdout, stderr, code := caravan(t, tc.binary, append(tc.args, "--help")...)
		if code != 0 || stderr != "" {
			t.Errorf("%s %v --help: exit code %d, stderr %q", tc.binary, tc.args, code, stderr)
		}
		rest := stdout
		for _, section := range tc.sections {
			_, after, found := strings.Cut(rest, section)
			if !found {
				t.Errorf("%s %v --help lacks %q after the sections before it:\n%s", tc.binary, tc.args, section, stdout)
				break
			}
			rest = after
		}
		// The flags every command takes are printed by caravan options, not by each command's help.
		if strings.Contains(stdout, "--kubeconfig") {
			t.Errorf("%s %v --help prints the global flags:\n%s", tc.binary, tc.args, stdout)
		}
	}
}

func TestOptionsPrintsTheFlagsEveryCommandTakes(t *testing.T) {
	for _, args := range [][]string{{"options"}, {"options", "--help"}} {
		stdout, _, code := caravan(t, "caravan", args...)
		for _, want := range []string{"The following options can be passed to any command:\n", "\n    --kubeconfig='':\n", "\n    -n, --namespace='':\n"} {
			if code != 0 || !strings.Contains(stdout, want) {
				t.Errorf("caravan %v: exit code %d, lacks %q:\n%s", args, code, want, stdout)
			}
		}
	}
}

// kubeconfigOf writes a kubeconfig whose contexts a (current, namespace team) and b name server.
func kubeconfigOf(t *testing.T, server string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "config")
	config := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "` + server + `"}
users:
- name: u
  user: {token: t}
contexts:
- name: b
  context: {cluster: c, user: u}
- name: a
  context: {cluster: c, user: u, namespace: team}
current-context: a
`
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestErrorsSayWhatWentWrongAndWhatToDo(t *testing.T) {
	kubeconfig := kubeconfigOf(t, "https://127.0.0.1:1")
	route := filepath.Join(t.TempDir(), "route.yaml")
	if err := os.WriteFile(route, []byte("- from:\n    uri: timer:tick\n    steps:\n    - to: log:info\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		// want is what stderr holds.
		want string
		code int
	}{
		{[]string{"get", "integrations"}, "error: cannot reach the Kubernetes API server https://127.0.0.1:1 (connect: connection refused): " +
			"check that the cluster runs and that the kubeconfig's context, or --context or --server, names its address", command.ExitFailure},
		{[]string{"get", "integrations", "--kubeconfig", "/nope"}, "error: --kubeconfig /nope: the file does not exist: give the path of a kubeconfig, " +
			"or leave --kubeconfig out to read KUBECONFIG or ~/.kube/config", command.ExitUsage},
		{[]string{"get", "integrations", "--context", "nosuch"}, "error: --context nosuch: no such context in the kubeconfig (" + kubeconfig + "): " +
			"its contexts are a, b; give one of them to --context", command.ExitUsage},
		{[]string{"run", route, "--timeout", "5"}, `error: --timeout "5": give a unit, such as 5s or 5m`, command.ExitUsage},
		{[]string{"logs", "x", "--since", "1 hour"}, `error: --since "1 hour": not a duration: give a number and a unit, such as 30s, 2m or 1h`, command.ExitUsage},
		{[]string{"install", "--dry-run", "--image", "Not An Image"}, `error: --image: invalid image reference "Not An Image"`, command.ExitUsage},
		{[]string{"install", "--image", "bad image"}, `error: --image: invalid image reference "bad image"`, command.ExitUsage},
		{[]string{"upgrade", "--image", "bad image"}, `error: --image: invalid image reference "bad image"`, command.ExitUsage},
		{[]string{"install", "--global", "--watch-namespaces", "x", "--dry-run"}, "error: --global and --watch-namespaces conflict: " +
			"--global serves every namespace, --watch-namespaces only those it lists; give one of them", command.ExitUsage},
	} {
		_, stderr, code := caravanWith(t, kubeconfig, "caravan", tc.args...)
		if !strings.HasPrefix(stderr, tc.want) || code != tc.code {
			t.Errorf("caravan %v: exit code %d and\n%s\nwant exit code %d and a message starting\n%s", tc.args, code, stderr, tc.code, tc.want)
		}
		if strings.Contains(stderr, "failed to get server groups") {
			t.Errorf("caravan %v reached the cluster: %s", tc.args, stderr)
		}
	}
}

func TestTheDryRunLeavesAnExistingNamespacesLabelsAsInstallDoes(t *testing.T) {
	stdout, stderr, code := caravanWith(t, kubeconfigOf(t, "https://127.0.0.1:1"), "caravan", "install", "-x", "a", "--dry-run", "-o", "yaml")
	if code != 0 {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	namespace, _, _ := strings.Cut(stdout, "\n---\n")
	if want := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n"; !strings.HasPrefix(namespace, want) || strings.Contains(namespace, "labels") {
		t.Errorf("the dry run prints the namespace\n%s\nwant it without labels:\n%s", namespace, want)
	}
	if want := "install labels a namespace it creates pod-security.kubernetes.io/enforce=restricted: when team is new, " +
		"do the same with kubectl label namespace team pod-security.kubernetes.io/enforce=restricted\n"; !strings.HasSuffix(stderr, want) {
		t.Errorf("stderr is %q, want it to end with %q", stderr, want)
	}
}

// statusServer is an HTTP server that answers every request with the API status code and reason.
func statusServer(t *testing.T, code int, reason string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":%q,"code":%d,"message":"%s %s: %s"}`,
			reason, code, r.Method, r.URL.Path, reason)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestExitCodesTellNotFoundFromForbidden(t *testing.T) {
	for _, tc := range []struct {
		status int
		reason string
		code   int
	}{
		{http.StatusNotFound, "NotFound", command.ExitNotFound},
		{http.StatusForbidden, "Forbidden", command.ExitForbidden},
	} {
		_, stderr, code := caravanWith(t, kubeconfigOf(t, statusServer(t, tc.status, tc.reason)), "caravan", "logs", "x")
		if code != tc.code || !strings.Contains(stderr, tc.reason) {
			t.Errorf("an API server answering %d: exit code %d and %q, want exit code %d", tc.status, code, stderr, tc.code)
		}
	}
}

// TestADevelopmentBuildRefusesToInstallItsImageOutsideTheLocalCluster: the default image of a
// development build exists only on the local cluster, so an install elsewhere without --image is
// refused before the cluster is asked anything; a dry run still prints the manifests.
func TestADevelopmentBuildRefusesToInstallItsImageOutsideTheLocalCluster(t *testing.T) {
	kubeconfig := kubeconfigOf(t, "https://127.0.0.1:1")
	_, stderr, code := caravanWith(t, kubeconfig, "caravan", "install", "-x", "a")
	if want := "error: --image is required: this caravan is a development build, whose default image caravan/operator:dev exists only on the local cluster"; code != 2 || !strings.HasPrefix(stderr, want) {
		t.Errorf("exit code %d and\n%s\nwant exit code 2 and a message starting\n%s", code, stderr, want)
	}
	if _, stderr, code := caravanWith(t, kubeconfig, "caravan", "install", "-x", "a", "--image", "registry.example/caravan/operator:1.0"); code == 2 {
		t.Errorf("an install with --image was refused before acting: %s", stderr)
	}
}
