package cli

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/spf13/cobra"

	"github.com/caravan-dev/caravan/internal/cli/clitest"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/cli/movecmd"
	"github.com/caravan-dev/caravan/internal/cli/observecmd"
	"github.com/caravan-dev/caravan/internal/cli/runcmd"
	"github.com/caravan-dev/caravan/internal/command"
)

func TestAWrongArgumentCountNamesTheUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"logs"}, "accepts 1 arg(s), received 0\nUsage: caravan logs NAME [options]\nSee 'caravan logs --help' for examples"},
		{[]string{"local", "up", "now"}, "Usage: caravan local up [options]"},
	} {
		root := NewRootCommand(genericiooptions.NewTestIOStreamsDiscard())
		root.SetArgs(tc.args)
		if err := root.Execute(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestTheCommandsUsersNeverTypeAreHidden(t *testing.T) {
	root := NewRootCommand(genericiooptions.NewTestIOStreamsDiscard())
	for _, path := range [][]string{{"operator"}, {"fleet"}, {"local", "node"}} {
		cmd, _, err := root.Find(path)
		if err != nil || !cmd.Hidden {
			t.Errorf("%v: hidden %v (%v)", path, cmd != nil && cmd.Hidden, err)
		}
	}
}

func TestExitCodesTellUsageFromOtherFailures(t *testing.T) {
	const route = "runcmd/testdata/run/routes.yaml"
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"logs"}, "accepts 1 arg(s)", command.ExitUsage},
		{[]string{"get", "--no-such-flag"}, "unknown flag: --no-such-flag", command.ExitUsage},
		{[]string{"run", route, "--replicas", "-1"}, "--replicas", command.ExitUsage},
		{[]string{"run", route, "-t", "foo.bar=1"}, "trait foo does not exist", command.ExitUsage},
		{[]string{"run", route, "-t", "container.nosuch=1"}, "nosuch", command.ExitUsage},
		{[]string{"run", route, route}, route + " is given twice", command.ExitUsage},
		{[]string{"run", route, "./" + route}, "are the same file", command.ExitUsage},
		{[]string{"run", "runcmd/testdata/run/no-such.yaml"}, "no-such.yaml", command.ExitUsage},
		{[]string{"run", "github:apache/camel-k-examples/routes.yaml"}, "give the https URL of the raw file", command.ExitUsage},
		{[]string{"bind", "timer:tick", "log:info", "-t", "foo.bar=1"}, "trait foo does not exist", command.ExitUsage},
		{[]string{"bind", "integration/up", "log:info"}, "source: an Integration cannot be the source", command.ExitUsage},
		{[]string{"run", route, "-x", ""}, "cannot use an empty operator id", command.ExitUsage},
		{[]string{"run", route, "--dry-run=bogus"}, "bogus", command.ExitUsage},
		{[]string{"run", route, "--image", "Bad::Image"}, "--image: invalid image reference", command.ExitUsage},
		{[]string{"run", route, "-d", "mvn:"}, "is not a Maven coordinate", command.ExitUsage},
		{[]string{"install", "-x", "a", "--watch-namespaces", "Bad_NS", "-o", "yaml"}, `watched namespace "Bad_NS"`, command.ExitUsage},
		{[]string{"version", "-o", "table"}, "table", command.ExitUsage},
		{[]string{"nosuchcommand"}, `unknown command "nosuchcommand" for "caravan"`, command.ExitUsage},
		{[]string{"kit", "delet"}, "unknown command \"delet\" for \"caravan kit\"\n\nDid you mean this?\n\tdelete", command.ExitUsage},
		{[]string{"kit", "create", "my-kit"}, "kit create is not taken: the operator makes a kit from an integration's dependencies", command.ExitUsage},
		{[]string{"get", "nosuch"}, `unknown resource type "nosuch"`, command.ExitUsage},
		{[]string{"describe", "nosuch", "x"}, `unknown resource type "nosuch"`, command.ExitUsage},
		{[]string{"run", route, "--timeout", "5"}, `--timeout "5": give a unit, such as 5s or 5m`, command.ExitUsage},
		{[]string{"install", "-x", "a", "--dry-run", "--image", "Not An Image"}, `--image: invalid image reference "Not An Image"`, command.ExitUsage},
		{[]string{"install", "-x", "a", "--image", "bad image"}, `--image: invalid image reference "bad image"`, command.ExitUsage},
		{[]string{"upgrade", "-x", "a", "--image", "bad image"}, `--image: invalid image reference "bad image"`, command.ExitUsage},
		{[]string{"install", "-x", "a", "--global", "--watch-namespaces", "x", "-o", "yaml"}, "--global and --watch-namespaces conflict", command.ExitUsage},
		{[]string{"get", "integrations"}, "cannot reach the Kubernetes API server https://127.0.0.1:1", command.ExitFailure},
	} {
		root := NewRootCommand(genericiooptions.NewTestIOStreamsDiscard())
		root.SetArgs(append(tc.args, clitest.Unreachable...))
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.args, err, tc.want)
		}
		if got := command.ExitCode(err); got != tc.code {
			t.Errorf("%v: exit code %d, want %d", tc.args, got, tc.code)
		}
	}
}

func TestRunHelpHasExamples(t *testing.T) {
	for _, newCmd := range []func(*cmdutil.KubeFlags, genericiooptions.IOStreams) *cobra.Command{
		runcmd.NewCmdRun, runcmd.NewCmdBind, runcmd.NewCmdDelete, runcmd.NewCmdRebuild, movecmd.NewCmdReassign, movecmd.NewCmdMigrate, runcmd.NewCmdDeploy, runcmd.NewCmdUndeploy, runcmd.NewCmdPromote, observecmd.NewCmdLogs, observecmd.NewCmdGet,
	} {
		cmd := newCmd(cmdutil.NewKubeFlags(), genericiooptions.NewTestIOStreamsDiscard())
		if !strings.Contains(cmd.Example, "caravan "+strings.Fields(cmd.Use)[0]) {
			t.Errorf("%s: the examples do not show the command: %q", cmd.Use, cmd.Example)
		}
		var help bytes.Buffer
		cmd.SetOut(&help)
		cmd.SetArgs([]string{"--help"})
		if err := cmd.Execute(); err != nil || !strings.Contains(help.String(), "Examples:") {
			t.Errorf("%s --help: %v\n%s", cmd.Use, err, help.String())
		}
	}
}

func TestAGroupOfCommandsPrintsItsHelp(t *testing.T) {
	for _, group := range []string{"kit", "local", "image"} {
		var out bytes.Buffer
		root := NewRootCommand(genericiooptions.IOStreams{Out: &out, ErrOut: &out})
		root.SetArgs([]string{group})
		if err := root.Execute(); err != nil {
			t.Fatalf("%s: %v", group, err)
		}
		for _, want := range []string{"\nAvailable Commands:\n", "\nUsage:\n  caravan " + group + " [command] [options]\n"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s printed %q, want %q", group, out.String(), want)
			}
		}
	}
}
