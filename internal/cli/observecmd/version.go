package observecmd

import (
	"context"
	"encoding/json"
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
	"sigs.k8s.io/yaml"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/command"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/internal/version"
)

// VersionOptions are the options of `caravan version`.
type VersionOptions struct {
	cmdutil.Cluster

	OperatorID string
	All        bool
	// ClientOnly prints the client's version only, whatever else is asked (--client).
	ClientOnly bool
	// Output is "", yaml or json.
	Output string

	now func() time.Time
	genericiooptions.IOStreams
}

// NewCmdVersion builds `caravan version`, the CLI's and the operators' versions.
func NewCmdVersion(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &VersionOptions{Cluster: cmdutil.Cluster{Kube: kube}, now: time.Now, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of this caravan binary and of running operators",
		Long: `Print the version of this caravan binary. With -x ID, also the version of
operator ID, read from its registration (one get of the IntegrationOperator
ID); with --all, the versions of every registered operator (one list).
Without either flag, or with --client, the cluster is not contacted. With
-o yaml|json the output also holds the commit and Go version of the build.`,
		Example: `  # Print the client version
  caravan version

  # Print the version of the operator tenant-a
  caravan version -x tenant-a

  # Print the versions of all registered operators
  caravan version --all

  # Print this binary's version, commit and Go version as JSON
  caravan version --client -o json`,
		Args: cobra.NoArgs,
		RunE: cmdutil.RunE(o),
	}
	cmd.Flags().StringVarP(&o.OperatorID, "operator-id", "x", "", "also print the version of the operator with this id")
	cmd.Flags().BoolVar(&o.All, "all", false, "also print the versions of every registered operator")
	cmd.Flags().BoolVar(&o.ClientOnly, "client", false, "print the client's version only, without contacting the cluster")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "output format: yaml or json, with the commit and Go version of the build")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{cmdutil.OutputYAML, cmdutil.OutputJSON}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("operator-id", cmdutil.CompleteOperatorIDs(kube))
	return cmd
}

// Validate checks the flags; it needs no cluster.
func (o *VersionOptions) Validate() error {
	if o.OperatorID != "" && o.All {
		return errors.New("--operator-id and --all exclude each other: use one of them")
	}
	if o.ClientOnly && (o.OperatorID != "" || o.All) {
		return errors.New("--client prints the client's version only: drop --operator-id and --all")
	}
	if err := cmdutil.ValidateOutputFormat(o.Output); err != nil {
		return err
	}
	if o.OperatorID != "" {
		if err := ownership.ValidateID(o.OperatorID); err != nil {
			return fmt.Errorf("--operator-id: %w", err)
		}
	}
	return nil
}

// Complete has nothing to fill in: the preamble builds the client.
func (o *VersionOptions) Complete() error { return nil }

// Preamble asks for a client when an operator's version is asked for (building it does not
// reach the cluster yet), and for nothing otherwise.
func (o *VersionOptions) Preamble() (*cmdutil.Cluster, cmdutil.Needs) {
	if o.ClientOnly || (o.OperatorID == "" && !o.All) {
		return &o.Cluster, 0
	}
	return &o.Cluster, cmdutil.NeedClient
}

// versions is what `caravan version -o yaml|json` prints.
type versions struct {
	Client    version.Info      `json:"clientVersion"`
	Operators []operatorVersion `json:"operators,omitempty"`
}

// operatorVersion is one registered operator's version, as its registration says.
type operatorVersion struct {
	ID        string `json:"id"`
	Version   string `json:"version"`
	Namespace string `json:"namespace"`
	Live      bool   `json:"live"`
	// Heartbeat is the registration's last renewal, empty when it was never renewed.
	Heartbeat string `json:"heartbeat,omitempty"`
}

// Run prints the client version, then the operators' versions.
func (o *VersionOptions) Run(ctx context.Context) error {
	iops, err := o.operators(ctx)
	if err != nil {
		return err
	}
	if o.Output != "" {
		out := versions{Client: version.GetInfo()}
		now := o.now()
		for i := range iops {
			reg := ownership.FromOperator(&iops[i])
			ov := operatorVersion{ID: iops[i].Name, Version: iops[i].Status.Version, Namespace: iops[i].Status.Namespace, Live: reg.Live(now)}
			if !reg.Heartbeat.IsZero() {
				ov.Heartbeat = reg.Heartbeat.UTC().Format(time.RFC3339)
			}
			out.Operators = append(out.Operators, ov)
		}
		return printVersions(o.Out, o.Output, out)
	}
	if _, err := fmt.Fprintf(o.Out, "Client: %s\n", version.Get()); err != nil {
		return err
	}
	if o.All && len(iops) == 0 {
		fmt.Fprintln(o.ErrOut, "No operators are registered.")
		return nil
	}
	return writeOperatorVersions(o.Out, iops, o.now())
}

// operators reads the registrations -x or --all asks for, sorted by id.
func (o *VersionOptions) operators(ctx context.Context) ([]camelv1alpha1.IntegrationOperator, error) {
	switch {
	case o.OperatorID != "":
		iop := &camelv1alpha1.IntegrationOperator{}
		if err := o.Client.Get(ctx, client.ObjectKey{Name: o.OperatorID}, iop); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, command.WithExitCode(command.ExitNotFound,
					fmt.Errorf("operator %q is not registered: no IntegrationOperator named %s", o.OperatorID, o.OperatorID))
			}
			return nil, fmt.Errorf("reading the registration of operator %q: %w", o.OperatorID, err)
		}
		return []camelv1alpha1.IntegrationOperator{*iop}, nil
	case o.All:
		list := &camelv1alpha1.IntegrationOperatorList{}
		if err := o.Client.List(ctx, list); err != nil {
			return nil, fmt.Errorf("listing the registered operators: %w", err)
		}
		slices.SortFunc(list.Items, func(a, b camelv1alpha1.IntegrationOperator) int { return strings.Compare(a.Name, b.Name) })
		return list.Items, nil
	}
	return nil, nil
}

// writeOperatorVersions prints one line per operator:
// "Operator ID: VERSION (namespace NS)", saying when it is not live.
func writeOperatorVersions(w io.Writer, iops []camelv1alpha1.IntegrationOperator, now time.Time) error {
	for i := range iops {
		iop := &iops[i]
		where := "namespace " + cmdutil.OrNone(iop.Status.Namespace)
		reg := ownership.FromOperator(iop)
		switch {
		case reg.Heartbeat.IsZero():
			where += ", never renewed its registration"
		case !reg.Live(now):
			where += ", not live: last heartbeat " + cmdutil.Age(reg.Heartbeat, now) + " ago"
		}
		if _, err := fmt.Fprintf(w, "Operator %s: %s (%s)\n", iop.Name, cmdutil.OrNone(iop.Status.Version), where); err != nil {
			return err
		}
	}
	return nil
}

// printVersions writes v as yaml or json, as kubectl version -o does.
func printVersions(w io.Writer, format string, v versions) error {
	var data []byte
	var err error
	if format == cmdutil.OutputJSON {
		data, err = json.MarshalIndent(v, "", "  ")
		data = append(data, '\n')
	} else {
		data, err = yaml.Marshal(v)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}
