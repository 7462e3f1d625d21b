package main

import (
	"bytes"
	"errors"
	"fmt"
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
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBECONFIG=")
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
