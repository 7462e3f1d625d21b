package movecmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/canary"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/command"
	"github.com/caravan-dev/caravan/internal/reassign"
)

// ReassignOptions are the options of `caravan reassign`.
type ReassignOptions struct {
	cmdutil.Cluster

	Names         []string
	From          string
	To            string
	AllNamespaces bool
	DryRun        cmdutil.DryRun
	Wait          bool
	Timeout       time.Duration
	Force         bool
	// Selector narrows --from to the resources whose labels match it.
	Selector string
	// Waves, WaveTimeout, Pause and RollbackOnFailure make a canary move
	// of --from (see canary.go).
	Waves             string
	WaveTimeout       time.Duration
	Pause             time.Duration
	RollbackOnFailure bool

	// outside is the id of the operator, not Caravan's, that `caravan migrate` moves from: an
	// integration settles under it without an ownership record (see settledUnder).
	outside string

	// Set by Complete and Validate.
	waves    []canary.Wave
	selector labels.Selector
	now      func() time.Time

	genericiooptions.IOStreams
}

// NewCmdReassign builds `caravan reassign`, which moves work between operators.
func NewCmdReassign(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ReassignOptions{Cluster: cmdutil.Cluster{Kube: kube}, Timeout: 5 * time.Minute, now: time.Now, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "reassign [KIND/]NAME... --to ID | --from ID --to ID",
		Short: "Move integrations, Pipes and KameletBindings to another operator",
		Long: `Move resources to another operator by changing their camel.apache.org/operator.id
annotation, as kubectl annotate --overwrite would, with the resourceVersion read
as a precondition: a resource changed meanwhile is read again and checked again.
The operators hand the resources over, and the children (Integrations made from
a Pipe, kits, Deployments) follow. Running pods keep running: they roll only when
the new operator runs another image (a kit of its own), never below the replicas.

Name resources as NAME (an Integration), integration/NAME, pipe/NAME or
kameletbinding/NAME; with --from they must be assigned to that operator. Or move
everything assigned to --from: the Integrations, Pipes and KameletBindings of the
namespace (of all namespaces with -A) whose label and annotation name it.
Resources of other operators are never touched.

The operator --to must be registered (checked first, unless --force).`,
		Example: `  # Move two integrations to the operator tenant-b
  caravan reassign hello world --to tenant-b

  # See what moving everything from camel-k to canary would move
  caravan reassign --from camel-k --to canary -A --dry-run

  # Move it, and wait until every moved integration runs under canary
  caravan reassign --from camel-k --to canary -A --wait

  # A canary: 10%, then half, then all of team-a's integrations, each wave
  # waiting until its integrations run under v2; a failed wave moves back
  caravan reassign --from v1 --to v2 -A -l team=team-a --waves 10%,50%,100% --rollback-on-failure`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Names = args
			return cmdutil.Run(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.To, "to", "", "the operator id to move to (required)")
	f.StringVar(&o.From, "from", "", "move what is assigned to this operator id; with names, move them only if they are")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "with --from, move the resources of every namespace")
	cmdutil.AddDryRunFlag(f, &o.DryRun, "client: print what would move and change nothing; server: also send each move with dryRun=All, so admission (the use check on --to) runs")
	f.BoolVar(&o.Wait, "wait", false, "wait until every moved integration runs under --to, printing progress")
	f.DurationVar(&o.Timeout, "timeout", o.Timeout, "how long --wait waits")
	f.BoolVar(&o.Force, "force", false, "move to --to even if that operator is not registered")
	f.StringVarP(&o.Selector, "selector", "l", "", "with --from, move only the resources whose labels match this selector (team=a,tier!=prod)")
	f.StringVar(&o.Waves, "waves", "", "move in waves, as rising percentages (10%,50%,100%) or counts (5,20) of what --from has; each wave waits until its integrations run under --to")
	f.DurationVar(&o.WaveTimeout, "wave-timeout", 5*time.Minute, "how long a wave waits for its integrations to run under --to before it fails")
	f.DurationVar(&o.Pause, "pause", 0, "with --waves, wait this long between waves, to watch the moved integrations")
	f.BoolVar(&o.RollbackOnFailure, "rollback-on-failure", false, "with --waves, move a failed wave back to --from and stop")
	return cmd
}

// Complete resolves the namespace and makes the client.
func (o *ReassignOptions) Complete() error { return nil }

// Preamble asks for the namespace and a client that watches the moves.
func (o *ReassignOptions) Preamble() (*cmdutil.Cluster, cmdutil.Needs) {
	return &o.Cluster, cmdutil.NeedNamespace | cmdutil.NeedWatch
}

// Validate checks the arguments and flags.
func (o *ReassignOptions) Validate() error {
	if o.To == "" {
		return errors.New("--to is required: the id of the operator to move to")
	}
	if err := cmdutil.ValidateOperatorIDFlag("--to", o.To); err != nil {
		return err
	}
	if o.From != "" {
		if err := cmdutil.ValidateOperatorIDFlag("--from", o.From); err != nil {
			return err
		}
		if o.From == o.To {
			return fmt.Errorf("--from and --to are both %q", o.To)
		}
	}
	switch {
	case len(o.Names) == 0 && o.From == "":
		return errors.New("give the names of the resources to move, or --from")
	case len(o.Names) > 0 && o.AllNamespaces:
		return errors.New("-A/--all-namespaces only applies to --from without names")
	case o.Wait && o.DryRun.Any():
		return errors.New("--wait cannot be used with --dry-run")
	case o.Timeout <= 0:
		return fmt.Errorf("--timeout must be positive, got %s", o.Timeout)
	}
	for _, n := range o.Names {
		if _, _, err := parseKindName(n); err != nil {
			return err
		}
	}
	return o.validateCanary()
}

// Run selects, moves and, with --wait, waits.
func (o *ReassignOptions) Run(ctx context.Context) error {
	c := o.Watch
	if !o.Force {
		if err := cmdutil.CheckOperatorRegistered(ctx, c, o.To, o.now(), o.ErrOut); err != nil {
			return err
		}
	}
	targets, problems, notFound, err := o.selectTargets(ctx, c)
	if err != nil {
		return err
	}
	if len(o.waves) > 0 && !o.DryRun.Any() {
		return o.runWaves(ctx, targets)
	}
	moved := map[string]int{}
	var movedIntegrations []types.NamespacedName
	failed := 0
	for _, t := range targets {
		if o.DryRun.Client() {
			fmt.Fprintf(o.Out, "%s: %s -> %s (dry run)\n", t, reassign.DisplayID(t.Obj.Annotations[camelv1.OperatorIDAnnotation]), o.To)
			moved[t.Kind.Name]++
			continue
		}
		from, err := o.move(ctx, c, t)
		if err != nil {
			fmt.Fprintf(o.ErrOut, "error: %s: %v\n", t, err)
			failed++
			continue
		}
		if o.DryRun.Server() {
			fmt.Fprintf(o.Out, "%s: %s -> %s (server dry run)\n", t, reassign.DisplayID(from), o.To)
			moved[t.Kind.Name]++
			continue
		}
		fmt.Fprintf(o.Out, "%s: %s -> %s\n", t, reassign.DisplayID(from), o.To)
		moved[t.Kind.Name]++
		if t.Kind.Name == "integration" {
			movedIntegrations = append(movedIntegrations, types.NamespacedName{Namespace: t.Obj.Namespace, Name: t.Obj.Name})
		}
	}
	if o.DryRun.Client() {
		fmt.Fprintf(o.Out, "would move %s (dry run)\n", countMoved(moved))
	} else if o.DryRun.Server() {
		fmt.Fprintf(o.Out, "would move %s (server dry run); %d refused\n", countMoved(moved), failed)
	} else {
		fmt.Fprintf(o.Out, "moved %s; %d failed\n", countMoved(moved), failed)
	}
	if failed > 0 {
		problems = append(problems, fmt.Sprintf("%d of %d resources failed to move", failed, len(targets)))
	}
	waitCode := 0
	if o.Wait && len(movedIntegrations) > 0 {
		if err := waitRunningUnder(ctx, c, o.Out, o.listNamespace(), movedIntegrations, o.To, o.Timeout, o.settledUnder(o.To)); err != nil {
			problems = append(problems, err.Error())
			waitCode = command.ExitCode(err)
		}
	}
	if len(problems) == 1 && waitCode != 0 {
		// Only the wait failed: its code says how.
		return command.WithExitCode(waitCode, errors.New(problems[0]))
	}
	if len(problems) > 0 && len(problems) == notFound {
		// Only names the cluster lacks: the code says so.
		return command.WithExitCode(command.ExitNotFound, errors.New(strings.Join(problems, "; ")))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// settledUnder tells when an integration has settled under operator id.
func (o *ReassignOptions) settledUnder(id string) func(*camelv1.Integration) bool {
	if id != "" && id == o.outside {
		return func(it *camelv1.Integration) bool { return reassign.SettledOutside(it, id) }
	}
	return func(it *camelv1.Integration) bool { return reassign.Settled(it, id) }
}

func (o *ReassignOptions) listNamespace() string {
	if o.AllNamespaces {
		return ""
	}
	return o.Namespace
}

// selectTargets reads the named resources, or lists what --from has. A
// named resource that is missing, is made from a binding, is not assigned
// to --from or is already on --to is a problem (or a note) to report; notFound counts the missing.
func (o *ReassignOptions) selectTargets(ctx context.Context, c client.Client) (targets []reassign.Target, problems []string, notFound int, err error) {
	if len(o.Names) == 0 {
		targets, problems, err = o.listFrom(ctx, c)
		return targets, problems, 0, err
	}
	for _, n := range o.Names {
		kind, name, _ := parseKindName(n)
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(kind.GVK)
		err := c.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: name}, obj)
		obj.Namespace, obj.Name = o.Namespace, name
		t := reassign.Target{Kind: kind, Obj: obj}
		id := obj.Annotations[camelv1.OperatorIDAnnotation]
		switch {
		case apierrors.IsNotFound(err):
			problems = append(problems, fmt.Sprintf("%s not found", t))
			notFound++
		case err != nil:
			return nil, nil, 0, fmt.Errorf("reading %s: %w", t, err)
		case reassign.MadeFromBinding(kind, obj) != "":
			problems = append(problems, fmt.Sprintf("%s is made from %s: reassign that instead", t, reassign.MadeFromBinding(kind, obj)))
		case o.From != "" && id != o.From:
			problems = append(problems, fmt.Sprintf("%s is assigned to %s, not %s: left alone", t, reassign.DisplayID(id), o.From))
		case id == o.To:
			fmt.Fprintf(o.Out, "%s: already on %s\n", t, o.To)
		default:
			targets = append(targets, t)
		}
	}
	return targets, problems, notFound, nil
}

// listFrom lists what --from has: the resources labelled for it whose
// annotation also names it; integrations made from a binding follow it.
func (o *ReassignOptions) listFrom(ctx context.Context, c client.Client) ([]reassign.Target, []string, error) {
	targets, err := reassign.List(ctx, c, o.listNamespace(), o.From, reassign.Selector(o.From, o.selector))
	return targets, nil, err
}

// move moves t to --to (see reassign.Move), only if it is still assigned
// to --from when --from is given, and returns the id it moved it from.
func (o *ReassignOptions) move(ctx context.Context, c client.Client, t reassign.Target) (string, error) {
	if o.DryRun.Server() {
		return reassign.Move(ctx, c, t, o.From, o.To, client.DryRunAll)
	}
	return reassign.Move(ctx, c, t, o.From, o.To)
}

// parseKindName reads NAME (an Integration) or KIND/NAME.
func parseKindName(s string) (reassign.Kind, string, error) {
	k, name, hasKind := strings.Cut(s, "/")
	if !hasKind {
		return reassign.Kinds[0], s, nil
	}
	kind, ok := reassign.KindNamed(k)
	switch {
	case !ok:
		return reassign.Kind{}, "", fmt.Errorf("%q: unknown kind %q: use integration, pipe or kameletbinding", s, k)
	case name == "":
		return kind, "", fmt.Errorf("%q: the name is missing", s)
	}
	return kind, name, nil
}

// countMoved says "3 integrations, 1 pipe": integrations always, the
// other kinds when some moved.
func countMoved(moved map[string]int) string {
	var parts []string
	for _, kind := range reassign.Kinds {
		n := moved[kind.Name]
		if n == 0 && kind.Name != "integration" {
			continue
		}
		noun := kind.Name
		if n != 1 {
			noun += "s"
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, noun))
	}
	return strings.Join(parts, ", ")
}

// waitRunningUnder watches the integrations labelled for operator to
// (in namespace ns, "" for all) until each of keys is done: it reports to
// as its owner and is Running, or Error (see settledUnder). It prints progress as the count
// changes, and fails on timeout or if some reached Error.
func waitRunningUnder(ctx context.Context, c client.WithWatch, out io.Writer, ns string, keys []types.NamespacedName, to string, timeout time.Duration,
	done func(*camelv1.Integration) bool) error {
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	state := map[types.NamespacedName]*camelv1.Integration{}
	for _, k := range keys {
		state[k] = nil
	}
	count := func() (running, finished int) {
		for _, it := range state {
			if done(it) {
				finished++
				if it.Status.Phase == camelv1.IntegrationPhaseRunning {
					running++
				}
			}
		}
		return running, finished
	}
	printed := -1
	lw := cmdutil.IntegrationListWatch(c, client.InNamespace(ns), client.MatchingLabels{camelv1.OperatorIDLabel: to})
	_, err := watchtools.UntilWithSync(waitCtx, lw, &camelv1.Integration{}, nil, func(ev watch.Event) (bool, error) {
		it, ok := ev.Object.(*camelv1.Integration)
		if !ok {
			return false, nil
		}
		key := types.NamespacedName{Namespace: it.Namespace, Name: it.Name}
		if _, tracked := state[key]; !tracked {
			return false, nil
		}
		if ev.Type == watch.Deleted {
			fmt.Fprintf(out, "integration %s was deleted\n", key)
			delete(state, key)
		} else {
			state[key] = it
		}
		running, finished := count()
		if running != printed {
			fmt.Fprintf(out, "%d/%d running under %s\n", running, len(state), to)
			printed = running
		}
		return finished == len(state), nil
	})
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil && wait.Interrupted(err):
		return command.WithExitCode(command.ExitTimeout, fmt.Errorf("timed out after %s: %s", timeout, pendingSummary(state, done, to)))
	case err != nil:
		return err
	}
	var failed []string
	for _, k := range sortedKeys(state) {
		if it := state[k]; it.Status.Phase == camelv1.IntegrationPhaseError {
			failed = append(failed, fmt.Sprintf("%s: %s", k, cmdutil.ReadyMessage(it)))
		}
	}
	if len(failed) > 0 {
		return command.WithExitCode(command.ExitFailed,
			fmt.Errorf("%d integrations are in phase Error under %s: %s", len(failed), to, strings.Join(failed, "; ")))
	}
	return nil
}

// pendingSummary says how far a wait got and which integrations it still
// waited for (at most 10).
func pendingSummary(state map[types.NamespacedName]*camelv1.Integration, done func(*camelv1.Integration) bool, to string) string {
	var pending []string
	running := 0
	for _, k := range sortedKeys(state) {
		it := state[k]
		switch {
		case done(it) && it.Status.Phase == camelv1.IntegrationPhaseRunning:
			running++
		case done(it):
		case it == nil:
			pending = append(pending, fmt.Sprintf("%s (not labelled for %s yet)", k, to))
		default:
			pending = append(pending, fmt.Sprintf("%s (%s)", k, cmdutil.DescribeWait(it)))
		}
	}
	more := ""
	if len(pending) > 10 {
		more = fmt.Sprintf(" and %d more", len(pending)-10)
		pending = pending[:10]
	}
	return fmt.Sprintf("%d/%d running under %s; waiting for %s%s", running, len(state), to, strings.Join(pending, ", "), more)
}

func sortedKeys(state map[types.NamespacedName]*camelv1.Integration) []types.NamespacedName {
	keys := make([]types.NamespacedName, 0, len(state))
	for k := range state {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
	return keys
}
