package installcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// UninstallOptions are the options of `caravan uninstall`.
type UninstallOptions struct {
	cmdutil.Cluster
	ID    string
	All   bool
	Fleet bool

	// idSet tells whether -x was given.
	idSet bool
	genericiooptions.IOStreams
}

// NewCmdUninstall builds `caravan uninstall`, which removes one operator's objects.
func NewCmdUninstall(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &UninstallOptions{Cluster: cmdutil.Cluster{Kube: kube}, ID: ownership.DefaultID, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Remove one operator's objects",
		Long: `Remove one operator's objects: its Deployment (or local process), roles,
ServiceAccount, platform and registration. Integrations it owned stay in place
and show as orphans (caravan get --orphaned) until another operator takes them;
the command says how many it leaves behind, and how to move them
(caravan reassign --from ID --to OTHER -A, best run before the uninstall).
The CRDs stay unless --all, which removes them and every Caravan resource.

An operator that an IntegrationOperator declares is removed by deleting that
IntegrationOperator; --fleet removes the fleet controller, once it runs none.`,
		Example: `  caravan uninstall -n operators -x tenant-a

  # The fleet controller
  caravan uninstall -n caravan-system --fleet`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.idSet = cmd.Flags().Changed("operator-id")
			return cmdutil.Run(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVarP(&o.ID, "operator-id", "x", o.ID, "the operator id")
	cmd.Flags().BoolVar(&o.All, "all", false, "also remove the CRDs, and with them every Caravan resource of the cluster")
	cmd.Flags().BoolVar(&o.Fleet, "fleet", false, "remove the fleet controller instead of an operator; refused while it runs declared operators")
	return cmd
}

// Complete resolves the namespace.
func (o *UninstallOptions) Complete() error { return nil }

// Preamble asks for the namespace; Run connects once the input is checked.
func (o *UninstallOptions) Preamble() (*cmdutil.Cluster, cmdutil.Needs) {
	return &o.Cluster, cmdutil.NeedNamespace
}

// Validate checks the id, and that --fleet comes alone.
func (o *UninstallOptions) Validate() error {
	if o.Fleet && (o.idSet || o.All) {
		return fmt.Errorf("--fleet removes the fleet controller alone: it takes neither --operator-id nor --all")
	}
	return ownership.ValidateID(o.ID)
}

// Run deletes the operator (its Deployment first, waited for), then its objects.
func (o *UninstallOptions) Run(ctx context.Context) error {
	if err := o.Connect(cmdutil.NeedWatch); err != nil {
		return err
	}
	installer := &install.Installer{Client: o.Watch, Out: o.Out}
	if o.Fleet {
		return installer.UninstallFleet(ctx, o.Namespace)
	}
	if err := o.findOperator(ctx, installer); err != nil {
		return err
	}
	if err := installer.Uninstall(ctx, o.ID, o.Namespace, o.All); err != nil {
		return err
	}
	if !o.All { // --all removed the integrations with the CRDs
		o.reportLeftBehind(ctx, o.Client)
	}
	return nil
}

// findOperator settles the namespace to uninstall from. An id is registered to one namespace:
// without -n that one is used; a -n that names another is refused. With neither a registration
// nor a Deployment of the id in the namespace there is nothing to uninstall, which is an error
// (but --all still removes the shared objects).
func (o *UninstallOptions) findOperator(ctx context.Context, installer *install.Installer) error {
	registered, err := installer.RegisteredNamespace(ctx, o.ID)
	if err != nil {
		return err
	}
	switch {
	case registered != "" && registered != o.Namespace && o.Kube.NamespaceFlag() == "":
		fmt.Fprintf(o.ErrOut, "operator %s is registered to namespace %s: uninstalling it there\n", o.ID, registered)
		o.Namespace = registered
	case registered != "" && registered != o.Namespace:
		return fmt.Errorf("operator %s is registered to namespace %s, not %s: give -n %s", o.ID, registered, o.Namespace, registered)
	}
	if registered != "" || o.All {
		return nil
	}
	found, err := installer.HasOperator(ctx, o.ID, o.Namespace)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("operator %s is not installed in namespace %s: no registration names it and no Deployment %s-operator runs there (caravan operators lists them)",
			o.ID, o.Namespace, o.ID)
	}
	return nil
}

// reportLeftBehind says how many integrations the operator leaves as
// orphans, and how to move them.
func (o *UninstallOptions) reportLeftBehind(ctx context.Context, c client.Client) {
	counts, err := cmdutil.CountOwnedIntegrations(ctx, c, []string{o.ID})
	switch {
	case err != nil:
		fmt.Fprintf(o.ErrOut, "could not tell which integrations operator %s leaves behind: %v\n", o.ID, err)
	case counts[o.ID] > 0:
		fmt.Fprintf(o.ErrOut, "operator %s leaves %d integration(s) behind: they keep running, unreconciled, as orphans "+
			"(caravan get --orphaned -A); move them with: caravan reassign --from %s --to ID -A\n", o.ID, counts[o.ID], o.ID)
	}
}
