package movecmd

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/cli/clitest"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
)

func newMigrate(t *testing.T, ns string, dryRun cmdutil.DryRun) (*MigrateOptions, func() (string, string)) {
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	o := &MigrateOptions{ReassignOptions{From: "camel-k", To: "op-b", Waves: "100%", DryRun: dryRun, WaveTimeout: time.Minute, Timeout: time.Minute,
		IOStreams: streams, now: time.Now}}
	o.Cluster.Watch, o.Namespace = clitest.WatchClient(t), ns
	return o, func() (string, string) { return out.String(), errOut.String() }
}

// TestAMigrationDryRunSaysWhatEachMoveKeepsAndMovesNothing: by client or by server, a dry run
// prints each plan and leaves every annotation as it was; the server's sends each move to
// admission too.
func TestAMigrationDryRunSaysWhatEachMoveKeepsAndMovesNothing(t *testing.T) {
	ns := clitest.Cluster(t).Namespace(t)
	clitest.Create(t, clitest.RegisteredOperator("op-b", time.Now()),
		clitest.AssignedIntegration(ns, "never-ran", "camel-k"), assignedPipe(ns, "p1", "camel-k"),
		clitest.AssignedIntegration(ns, "caravans", "op-b"))
	for _, dryRun := range []cmdutil.DryRun{cmdutil.DryRunClient, cmdutil.DryRunServer} {
		o, output := newMigrate(t, ns, dryRun)
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		if err := o.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		out, _ := output()
		for _, want := range []string{
			fmt.Sprintf("integration %s/never-ran: camel-k -> op-b: it has not run", ns),
			fmt.Sprintf("pipe %s/p1: camel-k -> op-b: it changed since its operator last compiled it", ns),
			"would move 2 resources from camel-k to op-b (dry run)",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s dry run printed:\n%s\nwant a line with %q", dryRun, out, want)
			}
		}
		if admitted := strings.Contains(out, "the API server admits 2 of the 2 moves (server dry run)"); admitted != (dryRun == cmdutil.DryRunServer) {
			t.Errorf("%s dry run printed:\n%s", dryRun, out)
		}
		if id, _ := operatorOfIntegration(t, ns, "never-ran"); id != "camel-k" {
			t.Fatalf("the %s dry run moved never-ran to %s", dryRun, id)
		}
	}
}

// TestMigratingFromACaravanOperatorIsRefused: a Caravan operator hands its resources over itself.
func TestMigratingFromACaravanOperatorIsRefused(t *testing.T) {
	ns := clitest.Cluster(t).Namespace(t)
	clitest.Create(t, clitest.RegisteredOperator("op-b", time.Now()), clitest.RegisteredOperator("op-a", time.Now()),
		clitest.AssignedIntegration(ns, "a1", "op-a"))
	o, _ := newMigrate(t, ns, cmdutil.DryRunClient)
	o.From = "op-a"
	err := o.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "operator op-a is a Caravan operator: move its resources with caravan reassign --from op-a") {
		t.Fatalf("got %v", err)
	}
	if id, _ := operatorOfIntegration(t, ns, "a1"); id != "op-a" {
		t.Fatalf("a1 moved to %s", id)
	}
}

// TestAMigrationPlanNamesTheRuntimeOfTheNewOperatorsPlatform: moved to an operator whose platform
// builds on Camel Quarkus, an integration is planned on Camel Quarkus, which reads its quarkus.*
// properties; on one whose platform names no provider, on camel-main, which does not.
func TestAMigrationPlanNamesTheRuntimeOfTheNewOperatorsPlatform(t *testing.T) {
	ns := clitest.Cluster(t).Namespace(t)
	it := clitest.AssignedIntegration(ns, "db", "camel-k")
	it.Spec.Configuration = []camelv1.ConfigurationSpec{{Type: "property", Value: "quarkus.datasource.db-kind=postgresql"}}
	clitest.Create(t, append(append(clitest.OperatorWithPlatform(ns, "op-q", "quarkus"), clitest.OperatorWithPlatform(ns, "op-b", "")...), it)...)
	for to, want := range map[string][]string{
		"op-q": {"Caravan builds its own kit on Camel Quarkus, as its new operator's platform says"},
		"op-b": {"on camel-main, as its new operator's platform says", "the property quarkus.datasource.db-kind is for Quarkus"},
	} {
		o, output := newMigrate(t, ns, cmdutil.DryRunClient)
		o.To = to
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		if err := o.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		out, _ := output()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("the plan of a move to %s:\n%s\nwant a line with %q", to, out, w)
			}
		}
		if quarkusRead := !strings.Contains(out, "is for Quarkus"); quarkusRead != (to == "op-q") {
			t.Errorf("the plan of a move to %s:\n%s", to, out)
		}
	}
}
