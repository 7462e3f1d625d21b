package movecmd

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/cli/clitest"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/command"
)

func assignedPipe(ns, name, operatorID string) *camelv1.Pipe {
	p := &camelv1.Pipe{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	p.Annotations = map[string]string{camelv1.OperatorIDAnnotation: operatorID}
	p.Labels = map[string]string{camelv1.OperatorIDLabel: operatorID}
	return p
}

func operatorOfIntegration(t *testing.T, ns, name string) (id, resourceVersion string) {
	t.Helper()
	it := &camelv1.Integration{}
	if err := clitest.Cluster(t).Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, it); err != nil {
		t.Fatal(err)
	}
	return it.OperatorID(), it.ResourceVersion
}

func newReassign(t *testing.T, ns string, o ReassignOptions) (*ReassignOptions, func() (string, string)) {
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	o.IOStreams, o.Cluster.Watch, o.Namespace, o.now = streams, clitest.WatchClient(t), ns, time.Now
	o.Timeout = time.Minute
	return &o, func() (string, string) { return out.String(), errOut.String() }
}

func TestReassignFromMovesOnlyWhatTheOperatorHas(t *testing.T) {
	ns := clitest.Cluster(t).Namespace(t)
	// The label says op-a but the annotation already moved to op-c: not op-a's any more.
	stale := clitest.AssignedIntegration(ns, "moved-away", "op-c")
	stale.Labels[camelv1.OperatorIDLabel] = "op-a"
	clitest.Create(t, clitest.RegisteredOperator("op-b", time.Now()),
		clitest.AssignedIntegration(ns, "a1", "op-a"), clitest.AssignedIntegration(ns, "a2", "op-a"), clitest.AssignedIntegration(ns, "b1", "op-b"),
		clitest.AssignedIntegration(ns, "c1", "op-c"), stale, clitest.ControlledByPipe(clitest.AssignedIntegration(ns, "from-pipe", "op-a"), "p1"),
		assignedPipe(ns, "p1", "op-a"))
	before := map[string]string{}
	for _, name := range []string{"b1", "c1", "moved-away", "from-pipe"} {
		_, before[name] = operatorOfIntegration(t, ns, name)
	}

	o, output := newReassign(t, ns, ReassignOptions{From: "op-a", To: "op-b", DryRun: cmdutil.DryRunClient})
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	out, _ := output()
	want := fmt.Sprintf("integration %[1]s/a1: op-a -> op-b (dry run)\nintegration %[1]s/a2: op-a -> op-b (dry run)\n"+
		"pipe %[1]s/p1: op-a -> op-b (dry run)\nwould move 2 integrations, 1 pipe (dry run)\n", ns)
	if out != want {
		t.Fatalf("dry run printed:\n%s\nwant:\n%s", out, want)
	}
	if id, _ := operatorOfIntegration(t, ns, "a1"); id != "op-a" {
		t.Fatalf("the dry run moved a1 to %s", id)
	}

	o, output = newReassign(t, ns, ReassignOptions{From: "op-a", To: "op-b"})
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	out, _ = output()
	want = fmt.Sprintf("integration %[1]s/a1: op-a -> op-b\nintegration %[1]s/a2: op-a -> op-b\npipe %[1]s/p1: op-a -> op-b\n"+
		"moved 2 integrations, 1 pipe; 0 failed\n", ns)
	if out != want {
		t.Fatalf("printed:\n%s\nwant:\n%s", out, want)
	}
	for _, name := range []string{"a1", "a2"} {
		if id, _ := operatorOfIntegration(t, ns, name); id != "op-b" {
			t.Errorf("%s is on %s", name, id)
		}
	}
	for name, rv := range before {
		if _, now := operatorOfIntegration(t, ns, name); now != rv {
			t.Errorf("%s was touched: resourceVersion %s -> %s", name, rv, now)
		}
	}
	pipe := &camelv1.Pipe{}
	if err := clitest.Cluster(t).Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "p1"}, pipe); err != nil || pipe.OperatorID() != "op-b" {
		t.Fatalf("the pipe is on %q (%v)", pipe.OperatorID(), err)
	}
}

func TestReassignByName(t *testing.T) {
	ns := clitest.Cluster(t).Namespace(t)
	clitest.Create(t, clitest.RegisteredOperator("op-b", time.Now()),
		clitest.AssignedIntegration(ns, "a1", "op-a"), clitest.AssignedIntegration(ns, "c1", "op-c"), clitest.AssignedIntegration(ns, "b1", "op-b"),
		clitest.AssignedIntegration(ns, "none", ""), clitest.ControlledByPipe(clitest.AssignedIntegration(ns, "from-pipe", "op-a"), "p1"),
		assignedPipe(ns, "p1", "op-a"))
	o, output := newReassign(t, ns, ReassignOptions{Names: []string{"a1", "none", "pipe/p1", "b1", "missing", "it/from-pipe"}, To: "op-b"})
	err := o.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("integration %s/missing not found", ns)) ||
		!strings.Contains(err.Error(), fmt.Sprintf(`integration %s/from-pipe is made from Pipe "p1": reassign that instead`, ns)) {
		t.Fatalf("got %v", err)
	}
	out, _ := output()
	for _, line := range []string{
		"integration %s/b1: already on op-b\n", "integration %s/a1: op-a -> op-b\n", "integration %s/none: <none> -> op-b\n",
		"pipe %s/p1: op-a -> op-b\n",
	} {
		if line = fmt.Sprintf(line, ns); !strings.Contains(out, line) {
			t.Errorf("the output lacks %q:\n%s", line, out)
		}
	}
	if !strings.Contains(out, "moved 2 integrations, 1 pipe; 0 failed\n") {
		t.Errorf("the output lacks the count:\n%s", out)
	}

	t.Log("with --from, a named resource of another operator is left alone")
	o, _ = newReassign(t, ns, ReassignOptions{Names: []string{"c1"}, From: "op-a", To: "op-b"})
	err = o.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("integration %s/c1 is assigned to op-c, not op-a: left alone", ns)) {
		t.Fatalf("got %v", err)
	}
	if id, _ := operatorOfIntegration(t, ns, "c1"); id != "op-c" {
		t.Fatalf("c1 moved to %s", id)
	}
	if code := command.ExitCode(err); code == command.ExitNotFound {
		t.Errorf("a resource left alone exits %d, the code of names not found", code)
	}

	t.Log("names the cluster lacks, and only those, exit with the code of not found")
	o, _ = newReassign(t, ns, ReassignOptions{Names: []string{"missing", "pipe/gone"}, To: "op-b"})
	err = o.Run(context.Background())
	if code := command.ExitCode(err); code != command.ExitNotFound ||
		!strings.Contains(err.Error(), fmt.Sprintf("pipe %s/gone not found", ns)) {
		t.Fatalf("got %v (exit code %d)", err, code)
	}
}

func TestReassignRefusesAnUnregisteredTarget(t *testing.T) {
	ns := clitest.Cluster(t).Namespace(t)
	clitest.Create(t, clitest.RegisteredOperator("op-b", time.Now()), clitest.AssignedIntegration(ns, "a1", "op-a"))
	o, _ := newReassign(t, ns, ReassignOptions{From: "op-a", To: "op-x"})
	err := o.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), `operator id "op-x" is not registered; registered: op-b (use --force to assign it anyway)`) {
		t.Fatalf("got %v", err)
	}
	if id, _ := operatorOfIntegration(t, ns, "a1"); id != "op-a" {
		t.Fatalf("a1 moved to %s", id)
	}
	o, _ = newReassign(t, ns, ReassignOptions{From: "op-a", To: "op-x", Force: true})
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if id, _ := operatorOfIntegration(t, ns, "a1"); id != "op-x" {
		t.Fatalf("with --force, a1 is on %s", id)
	}
}

func TestReassignValidation(t *testing.T) {
	cases := []struct {
		name    string
		o       ReassignOptions
		wantErr string
	}{
		{name: "no --to", o: ReassignOptions{From: "a"}, wantErr: "--to is required"},
		{name: "a bad --to", o: ReassignOptions{From: "a", To: "B"}, wantErr: `--to: invalid operator id "B"`},
		{name: "a bad --from", o: ReassignOptions{From: "a_", To: "b"}, wantErr: `--from: invalid operator id "a_"`},
		{name: "the same --from and --to", o: ReassignOptions{From: "a", To: "a"}, wantErr: `--from and --to are both "a"`},
		{name: "neither names nor --from", o: ReassignOptions{To: "b"}, wantErr: "give the names of the resources to move, or --from"},
		{name: "names with -A", o: ReassignOptions{Names: []string{"x"}, To: "b", AllNamespaces: true}, wantErr: "-A/--all-namespaces only applies to --from"},
		{name: "--wait with --dry-run", o: ReassignOptions{From: "a", To: "b", Wait: true, DryRun: cmdutil.DryRunClient}, wantErr: "--wait cannot be used with --dry-run"},
		{name: "an unknown kind", o: ReassignOptions{Names: []string{"route/x"}, To: "b"}, wantErr: `unknown kind "route": use integration, pipe or kameletbinding`},
		{name: "a kind without a name", o: ReassignOptions{Names: []string{"pipe/"}, To: "b"}, wantErr: `"pipe/": the name is missing`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.Timeout = time.Minute
			if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}

func TestCountMoved(t *testing.T) {
	cases := []struct {
		moved map[string]int
		want  string
	}{
		{map[string]int{}, "0 integrations"},
		{map[string]int{"integration": 1}, "1 integration"},
		{map[string]int{"integration": 12, "pipe": 1}, "12 integrations, 1 pipe"},
		{map[string]int{"pipe": 2, "kameletbinding": 1}, "0 integrations, 2 pipes, 1 kameletbinding"},
	}
	for _, tc := range cases {
		if got := countMoved(tc.moved); got != tc.want {
			t.Errorf("countMoved(%v) = %q, want %q", tc.moved, got, tc.want)
		}
	}
}
