package movecmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/migrate"
	"github.com/caravan-dev/caravan/internal/reassign"
	camelruntime "github.com/caravan-dev/caravan/internal/runtime"
)

// MigrateOptions are the options of `caravan migrate`: a move in waves from an operator that
// is not Caravan's, which ReassignOptions carries out.
type MigrateOptions struct {
	ReassignOptions
}

// NewCmdMigrate builds `caravan migrate`, which moves a namespace's integrations from Camel K's
// operator to a Caravan operator.
func NewCmdMigrate(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &MigrateOptions{ReassignOptions{Cluster: cmdutil.Cluster{Kube: kube}, Timeout: 5 * time.Minute, now: time.Now, IOStreams: streams}}
	cmd := &cobra.Command{
		Use:   "migrate --from ID --to ID [-n NAMESPACE | -A]",
		Short: "Move integrations from an operator that is not Caravan's (Camel K's) to a Caravan operator, in waves",
		Long: `Move the Integrations, Pipes and KameletBindings that an operator other than Caravan's
(Camel K's) runs to a Caravan operator, by their camel.apache.org/operator.id annotation:
the namespace's (every namespace's with -A) whose annotation names --from.

Camel K's operator stops acting on a resource as soon as its annotation names another
operator. The Caravan operator keeps the Deployment Camel K's operator made, and its pods,
until the integration's spec changes; a Pipe's Integration moves with it as Camel K's operator
made it, until the Pipe changes. Each wave waits until its integrations run under --to;
a wave that fails moves back to --from (unless --rollback-on-failure=false), where Camel K's
operator finds them as it left them.

--dry-run prints, for each resource, what the move keeps and what will differ under Caravan
(the runtime it will be rebuilt on, traits and properties Caravan does not act on, Kamelets
that are not installed), and moves nothing.`,
		Example: `  # What moving namespace team-a from Camel K's operator to caravan keeps and changes
  caravan migrate --from camel-k --to caravan -n team-a --dry-run

  # Move it: a quarter first, then the rest, each wave once it runs under caravan
  caravan migrate --from camel-k --to caravan -n team-a --waves 25%,100%`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("migrate takes no names (got %v): it moves what --from has; use caravan reassign for named resources", args)
			}
			return cmdutil.Run(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.From, "from", "", "the id of the operator, not Caravan's, to move from (required)")
	f.StringVar(&o.To, "to", "", "the id of the Caravan operator to move to (required)")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "move the resources of every namespace")
	cmdutil.AddDryRunFlag(f, &o.DryRun, "client: print what each move keeps and changes, and move nothing; server: also send each move with dryRun=All, so admission runs")
	f.StringVarP(&o.Selector, "selector", "l", "", "move only the resources whose labels match this selector (team=a,tier!=prod)")
	f.StringVar(&o.Waves, "waves", "100%", "move in waves, as rising percentages (10%,50%,100%) or counts (5,20); each wave waits until its integrations run under --to")
	f.DurationVar(&o.WaveTimeout, "wave-timeout", 5*time.Minute, "how long a wave waits for its integrations to run under --to before it fails")
	f.DurationVar(&o.Pause, "pause", 0, "wait this long between waves, to watch the moved integrations")
	f.BoolVar(&o.RollbackOnFailure, "rollback-on-failure", true, "move a failed wave back to --from and stop")
	return cmd
}

// Validate checks the flags.
func (o *MigrateOptions) Validate() error {
	if o.From == "" {
		return errors.New("--from is required: the id of the operator, not Caravan's, to move from (camel-k for Camel K's)")
	}
	o.outside = o.From
	return o.ReassignOptions.Validate()
}

// Run refuses a --from that is Caravan's, then prints the plan or moves in waves.
func (o *MigrateOptions) Run(ctx context.Context) error {
	c := o.Watch
	if err := refuseCaravans(ctx, c, o.From); err != nil {
		return err
	}
	reg, err := cmdutil.ReadRegistration(ctx, c, o.To, o.now(), o.ErrOut)
	if err != nil {
		return err
	}
	sel := o.selector
	if sel == nil {
		sel = labels.Everything()
	}
	// Camel K's resources need not carry the label Caravan mirrors: select by the annotation.
	targets, err := reassign.List(ctx, c, o.listNamespace(), o.From, sel)
	if err != nil {
		return err
	}
	if o.DryRun.Any() {
		if err := o.printPlans(ctx, c, targets, cmdutil.PlatformProvider(ctx, c, reg)); err != nil || !o.DryRun.Server() {
			return err
		}
		return o.sendDryRun(ctx, c, targets)
	}
	return o.runWaves(ctx, targets)
}

// sendDryRun sends each move with dryRun=All, so that admission judges it (the verb use on --to),
// and fails when some would be refused.
func (o *MigrateOptions) sendDryRun(ctx context.Context, c client.Client, targets []reassign.Target) error {
	refused := 0
	for _, t := range targets {
		if _, err := o.move(ctx, c, t); err != nil {
			fmt.Fprintf(o.ErrOut, "error: %s: %v\n", t, err)
			refused++
		}
	}
	fmt.Fprintf(o.Out, "the API server admits %d of the %d moves (server dry run)\n", len(targets)-refused, len(targets))
	if refused > 0 {
		return fmt.Errorf("%d of %d moves would be refused", refused, len(targets))
	}
	return nil
}

// refuseCaravans refuses to migrate from a Caravan operator, which hands its resources over
// itself (caravan reassign).
func refuseCaravans(ctx context.Context, c client.Reader, from string) error {
	err := c.Get(ctx, client.ObjectKey{Name: from}, &camelv1alpha1.IntegrationOperator{})
	switch {
	case err == nil:
		return fmt.Errorf("operator %s is a Caravan operator: move its resources with caravan reassign --from %s, which waits for its release", from, from)
	case apierrors.IsNotFound(err), apierrors.IsForbidden(err):
		return nil
	default:
		return fmt.Errorf("checking whether operator %s is Caravan's: %w", from, err)
	}
}

// printPlans prints, per target, what its move keeps and what will differ under Caravan.
func (o *MigrateOptions) printPlans(ctx context.Context, c client.Client, targets []reassign.Target, provider camelruntime.Provider) error {
	if len(targets) == 0 {
		fmt.Fprintf(o.Out, "operator %s has nothing to move\n", o.From)
		return nil
	}
	kamelets := map[string]map[string]bool{}
	installed := func(ns string) (func(string) bool, error) {
		if kamelets[ns] == nil {
			list := &camelv1.KameletList{}
			if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
				return nil, fmt.Errorf("listing the Kamelets of namespace %s: %w", ns, err)
			}
			kamelets[ns] = map[string]bool{}
			for _, k := range list.Items {
				kamelets[ns][k.Name] = true
			}
		}
		return func(name string) bool { return kamelets[ns][name] }, nil
	}
	differ := 0
	for _, t := range targets {
		plan, err := o.planOf(ctx, c, t, installed, provider)
		if err != nil {
			return err
		}
		fmt.Fprintf(o.Out, "%s: %s -> %s: %s\n", t, o.From, o.To, plan.Keeps)
		for _, d := range plan.Differences {
			fmt.Fprintf(o.Out, "  - %s\n", d)
		}
		if len(plan.Differences) > 0 {
			differ++
		}
	}
	fmt.Fprintf(o.Out, "would move %d resources from %s to %s (dry run); %d with differences under Caravan\n", len(targets), o.From, o.To, differ)
	return nil
}

// planOf plans the move of t: an Integration's own plan, or that of a Pipe's or KameletBinding's.
func (o *MigrateOptions) planOf(ctx context.Context, c client.Client, t reassign.Target, installed func(string) (func(string) bool, error),
	provider camelruntime.Provider) (migrate.Plan, error) {
	if t.Kind.Name != "integration" {
		b := &unstructured.Unstructured{}
		b.SetGroupVersionKind(t.Kind.GVK)
		if err := c.Get(ctx, client.ObjectKeyFromObject(t.Obj), b); err != nil {
			return migrate.Plan{}, fmt.Errorf("reading %s: %w", t, err)
		}
		observed, _, _ := unstructured.NestedInt64(b.Object, "status", "observedGeneration")
		return migrate.PlanBinding(b.GetGeneration(), observed), nil
	}
	it := &camelv1.Integration{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(t.Obj), it); err != nil {
		return migrate.Plan{}, fmt.Errorf("reading %s: %w", t, err)
	}
	has, err := installed(it.Namespace)
	if err != nil {
		return migrate.Plan{}, err
	}
	return migrate.PlanIntegration(it, has, provider), nil
}
