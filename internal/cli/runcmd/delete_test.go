package runcmd

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/caravan-dev/caravan/internal/cli/clitest"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/command"
)

func TestDeleteAllOfOneOperatorLeavesTheOthers(t *testing.T) {
	ns := clitest.Cluster(t).Namespace(t)
	clitest.Create(t, clitest.AssignedIntegration(ns, "a1", "op-a"), clitest.AssignedIntegration(ns, "a2", "op-a"),
		clitest.AssignedIntegration(ns, "b1", "op-b"), clitest.AssignedIntegration(ns, "none", ""),
		clitest.ControlledByPipe(clitest.AssignedIntegration(ns, "from-pipe", "op-a"), "p"))
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	o := &DeleteOptions{selectionCommand{integrationSelection: integrationSelection{All: true, OperatorID: "op-a"},
		Cluster: cmdutil.Cluster{Namespace: ns, Client: clitest.Cluster(t).Client}, IOStreams: streams}}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "integration \"a1\" deleted\nintegration \"a2\" deleted\n" {
		t.Fatalf("got output %q", got)
	}
	if !strings.Contains(errOut.String(), `Skipped: integration "from-pipe" is made from Pipe "p": delete that instead`) {
		t.Fatalf("got errors %q", errOut.String())
	}
	if got := strings.Join(clitest.RemainingIntegrations(t, ns), ","); got != "b1,from-pipe,none" {
		t.Fatalf("remaining: %s", got)
	}
}

func TestDeleteByNameReportsWhatIsMissingAfterDeletingTheRest(t *testing.T) {
	ns := clitest.Cluster(t).Namespace(t)
	clitest.Create(t, clitest.AssignedIntegration(ns, "a1", "op-a"), clitest.AssignedIntegration(ns, "b1", "op-b"))
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := &DeleteOptions{selectionCommand{integrationSelection: integrationSelection{Names: []string{"gone", "a1", "b1", "lost"}, OperatorID: "op-a"},
		Cluster: cmdutil.Cluster{Namespace: ns, Client: clitest.Cluster(t).Client}, IOStreams: streams}}
	err := o.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`integrations not found in namespace %s: "gone", "lost"`, ns)) ||
		!strings.Contains(err.Error(), `integration "b1" is assigned to operator "op-b", not "op-a": left alone`) {
		t.Fatalf("got %v", err)
	}
	if code := command.ExitCode(err); code != command.ExitNotFound {
		t.Errorf("exit code %d, want %d", code, command.ExitNotFound)
	}
	if out.String() != "integration \"a1\" deleted\n" {
		t.Fatalf("got output %q", out.String())
	}
	if got := strings.Join(clitest.RemainingIntegrations(t, ns), ","); got != "b1" {
		t.Fatalf("remaining: %s", got)
	}
}

func TestIntegrationSelectionValidation(t *testing.T) {
	cases := []struct {
		name    string
		sel     integrationSelection
		wantErr string
	}{
		{name: "names and --all together", sel: integrationSelection{Names: []string{"a"}, All: true}, wantErr: "give integration names or --all, not both"},
		{name: "neither names nor --all", wantErr: "give the names of the integrations, or --all"},
		{name: "a bad operator id", sel: integrationSelection{All: true, OperatorID: "A"}, wantErr: "-x/--operator-id: invalid operator id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.sel.validate(); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}
