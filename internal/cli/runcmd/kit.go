package runcmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/cli/observecmd"
	"github.com/caravan-dev/caravan/internal/command"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// NewCmdKit builds `caravan kit`, kamel kit's get and delete.
func NewCmdKit(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kit",
		Short: "List or delete integration kits, as kamel kit does",
		Args:  cobra.NoArgs,
	}
	get := observecmd.NewCmdGet(kube, streams)
	get.Use, get.Short = "get [NAME...]", "List integration kits (caravan get kits)"
	get.Example = `  # The kits of the namespace, with their phase, image and operator
  caravan kit get`
	runGet := get.RunE
	get.RunE = func(c *cobra.Command, args []string) error { return runGet(c, append([]string{"kits"}, args...)) }
	get.ValidArgsFunction = func(c *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return cmdutil.CompleteNames(c.Context(), kube, &camelv1.IntegrationKitList{}, true), cobra.ShellCompDirectiveNoFileComp
	}
	create := &cobra.Command{
		Use:    "create",
		Short:  "Not taken: kits are made by the operator from an integration's dependencies",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return command.WithExitCode(command.ExitUsage, errors.New("kit create is not taken: the operator makes a kit "+
				"from an integration's dependencies (caravan run -d ...); run an existing kit with caravan run -k NAME"))
		},
	}
	cmd.AddCommand(get, newCmdKitDelete(kube, streams), create)
	return cmd
}

// KitDeleteOptions are the options of `caravan kit delete`.
type KitDeleteOptions struct {
	cmdutil.Cluster

	Names      []string
	All        bool
	OperatorID string

	// Set by Complete.

	genericiooptions.IOStreams
}

func newCmdKitDelete(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &KitDeleteOptions{Cluster: cmdutil.Cluster{Kube: kube}, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "delete NAME... | --all",
		Short: "Delete integration kits",
		Long: `Delete integration kits of the namespace, by name or all of them; with -x only
those assigned to that operator. An integration that runs a deleted kit gets a
new one built at its next reconcile.`,
		Example: `  # Delete every kit of operator tenant-a in the namespace apps
  caravan kit delete --all -x tenant-a -n apps`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Names = args
			return cmdutil.Run(cmd.Context(), o)
		},
		ValidArgsFunction: func(c *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return cmdutil.CompleteNames(c.Context(), kube, &camelv1.IntegrationKitList{}, true), cobra.ShellCompDirectiveNoFileComp
		},
	}
	cmd.Flags().BoolVar(&o.All, "all", false, "delete every kit of the namespace")
	cmd.Flags().StringVarP(&o.OperatorID, "operator-id", "x", "", "only the kits assigned to this operator")
	return cmd
}

// Complete resolves the namespace and makes the client.
func (o *KitDeleteOptions) Complete() error {
	return nil
}

// Preamble asks for the namespace and a client.
func (o *KitDeleteOptions) Preamble() (*cmdutil.Cluster, cmdutil.Needs) {
	return &o.Cluster, cmdutil.NeedNamespace | cmdutil.NeedClient
}

// Validate checks that names or --all say what to delete.
func (o *KitDeleteOptions) Validate() error {
	switch {
	case o.All && len(o.Names) > 0:
		return errors.New("give kit names or --all, not both")
	case !o.All && len(o.Names) == 0:
		return errors.New("give the names of the kits to delete, or --all")
	}
	if o.OperatorID != "" {
		if err := ownership.ValidateID(o.OperatorID); err != nil {
			return fmt.Errorf("-x/--operator-id: %w", err)
		}
	}
	return nil
}

// Run deletes the kits, each with the resourceVersion read, so that one moved meanwhile stays.
func (o *KitDeleteOptions) Run(ctx context.Context) error {
	var kits []camelv1.IntegrationKit
	if o.All {
		list := &camelv1.IntegrationKitList{}
		if err := o.Client.List(ctx, list, client.InNamespace(o.Namespace)); err != nil {
			return fmt.Errorf("listing kits: %w", err)
		}
		kits = list.Items
	} else {
		for _, name := range o.Names {
			k := camelv1.IntegrationKit{}
			if err := o.Client.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: name}, &k); err != nil {
				return fmt.Errorf("kit %q: %w", name, err)
			}
			kits = append(kits, k)
		}
	}
	var errs []error
	for i := range kits {
		k := &kits[i]
		if o.OperatorID != "" && k.Annotations[camelv1.OperatorIDAnnotation] != o.OperatorID {
			if !o.All {
				errs = append(errs, fmt.Errorf("kit %q is assigned to %s, not %s: left alone", k.Name, cmdutil.OrNone(k.Annotations[camelv1.OperatorIDAnnotation]), o.OperatorID))
			}
			continue
		}
		err := o.Client.Delete(ctx, k, client.Preconditions{UID: &k.UID, ResourceVersion: &k.ResourceVersion})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			errs = append(errs, fmt.Errorf("deleting kit %q: %w", k.Name, err))
		default:
			fmt.Fprintf(o.Out, "kit %q deleted\n", k.Name)
		}
	}
	return errors.Join(errs...)
}
