package cli

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
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/internal/version"
)

// VersionOptions are the options of `caravan version`.
type VersionOptions struct {
	Kube *KubeFlags

	OperatorID string
	All        bool

	// Set by Complete, when the cluster is asked.
	client client.Client

	now func() time.Time
	genericiooptions.IOStreams
}

func newCmdVersion(kube *KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &VersionOptions{Kube: kube, now: time.Now, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of this caravan binary and of running operators",
		Long: `Print the version of this caravan binary. With -x ID, also the version of
operator ID, read from its registration (one get of the IntegrationOperator
ID); with --all, the versions of every registered operator (one list).
Without either flag the cluster is not contacted.`,
		Example: `  # Print the client version
  caravan version

  # Print the version of the operator tenant-a
  caravan version -x tenant-a

  # Print the versions of all registered operators
  caravan version --all`,
		Args: cobra.NoArgs,
		RunE: cmdutil.RunE(o),
	}
	cmd.Flags().StringVarP(&o.OperatorID, "operator-id", "x", "", "also print the version of the operator with this id")
	cmd.Flags().BoolVar(&o.All, "all", false, "also print the versions of every registered operator")
	_ = cmd.RegisterFlagCompletionFunc("operator-id", completeOperatorIDs(kube))
	return cmd
}

// Validate checks the flags; it needs no cluster.
func (o *VersionOptions) Validate() error {
	if o.OperatorID != "" && o.All {
		return errors.New("--operator-id and --all exclude each other: use one of them")
	}
	if o.OperatorID != "" {
		if err := ownership.ValidateID(o.OperatorID); err != nil {
			return fmt.Errorf("--operator-id: %w", err)
		}
	}
	return nil
}

// Complete builds the client when an operator's version is asked for
// (building it does not reach the cluster yet).
func (o *VersionOptions) Complete() error {
	if o.OperatorID == "" && !o.All {
		return nil
	}
	var err error
	o.client, err = o.Kube.Client()
	return err
}

// Run prints the client version, then the operators' versions.
func (o *VersionOptions) Run(ctx context.Context) error {
	if _, err := fmt.Fprintf(o.Out, "Client: %s\n", version.Get()); err != nil {
		return err
	}
	switch {
	case o.OperatorID != "":
		iop := &camelv1alpha1.IntegrationOperator{}
		if err := o.client.Get(ctx, client.ObjectKey{Name: o.OperatorID}, iop); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("operator %q is not registered: no IntegrationOperator named %s", o.OperatorID, o.OperatorID)
			}
			return fmt.Errorf("reading the registration of operator %q: %w", o.OperatorID, err)
		}
		return writeOperatorVersions(o.Out, []camelv1alpha1.IntegrationOperator{*iop}, o.now())
	case o.All:
		list := &camelv1alpha1.IntegrationOperatorList{}
		if err := o.client.List(ctx, list); err != nil {
			return fmt.Errorf("listing the registered operators: %w", err)
		}
		if len(list.Items) == 0 {
			fmt.Fprintln(o.ErrOut, "No operators are registered.")
			return nil
		}
		slices.SortFunc(list.Items, func(a, b camelv1alpha1.IntegrationOperator) int { return strings.Compare(a.Name, b.Name) })
		return writeOperatorVersions(o.Out, list.Items, o.now())
	}
	return nil
}

// writeOperatorVersions prints one line per operator:
// "Operator ID: VERSION (namespace NS)", saying when it is not live.
func writeOperatorVersions(w io.Writer, iops []camelv1alpha1.IntegrationOperator, now time.Time) error {
	for i := range iops {
		iop := &iops[i]
		where := "namespace " + orNone(iop.Status.Namespace)
		reg := ownership.FromOperator(iop)
		switch {
		case reg.Heartbeat.IsZero():
			where += ", never renewed its registration"
		case !reg.Live(now):
			where += ", not live: last heartbeat " + age(reg.Heartbeat, now) + " ago"
		}
		if _, err := fmt.Fprintf(w, "Operator %s: %s (%s)\n", iop.Name, orNone(iop.Status.Version), where); err != nil {
			return err
		}
	}
	return nil
}
