package cli

import (
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
)

func TestAWrongArgumentCountNamesTheUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"logs"}, "accepts 1 arg(s), received 0\nUsage: caravan logs NAME [flags]\nSee 'caravan logs --help' for examples"},
		{[]string{"local", "up", "now"}, "Usage: caravan local up [flags]"},
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
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"logs"}, cmdutil.ExitUsage},
		{[]string{"get", "--no-such-flag"}, cmdutil.ExitUsage},
		{[]string{"run", "testdata/run/routes.yaml", "--replicas", "-1"}, cmdutil.ExitUsage},
		{append([]string{"get", "integrations"}, unreachable...), cmdutil.ExitFailure},
	} {
		root := NewRootCommand(genericiooptions.NewTestIOStreamsDiscard())
		root.SetArgs(tc.args)
		if got := cmdutil.ExitCode(root.Execute()); got != tc.code {
			t.Errorf("%v: exit code %d, want %d", tc.args, got, tc.code)
		}
	}
}
