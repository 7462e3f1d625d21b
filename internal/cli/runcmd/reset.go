package runcmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/internal/reassign"
)

// ResetOptions are the options of `caravan reset`.
type ResetOptions struct {
	cmdutil.Cluster

	OperatorID      string
	AllNamespaces   bool
	DryRun          cmdutil.DryRun
	SkipIntegration bool
	SkipKits        bool

	// Set by Complete.

	genericiooptions.IOStreams
}

// resetKinds are what reset deletes, bindings first: their Integrations go with them.
var resetKinds = []struct {
	gvk  schema.GroupVersionKind
	name string
	kit  bool
}{
	{camelv1.GroupVersion.WithKind("Pipe"), "pipe", false},
	{camelv1alpha1.GroupVersion.WithKind("KameletBinding"), "kameletbinding", false},
	{camelv1.GroupVersion.WithKind("Integration"), "integration", false},
	{camelv1.GroupVersion.WithKind("IntegrationKit"), "kit", true},
	{camelv1.GroupVersion.WithKind("Build"), "build", true},
}

// NewCmdReset builds `caravan reset`, which deletes a namespace's or an operator's work.
func NewCmdReset(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ResetOptions{Cluster: cmdutil.Cluster{Kube: kube}, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "reset",
		Short: "Delete the integrations, bindings, kits and builds of a namespace, or of one operator's share",
		Long: `Delete every Pipe, KameletBinding, Integration, IntegrationKit and Build of the
namespace (-A: of all namespaces), as kamel reset does. With -x/--operator-id only
those assigned to that operator go, read by their annotation: one moved to another
operator meanwhile is left alone. Operators, platforms and Kamelets stay.
--dry-run lists what would be deleted.`,
		Example: `  # What a reset of the operator tenant-a's share in all namespaces would delete
  caravan reset -x tenant-a -A --dry-run

  # Delete the integrations and bindings of the namespace, keeping the kits
  caravan reset -n apps --skip-kits`,
		Args: cobra.NoArgs,
		RunE: cmdutil.RunE(o),
	}
	f := cmd.Flags()
	f.StringVarP(&o.OperatorID, "operator-id", "x", "", "only what is assigned to this operator")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "reset every namespace")
	cmdutil.AddDryRunFlag(f, &o.DryRun, "client: list what would be deleted and delete nothing; server: also send each delete with dryRun=All")
	f.BoolVar(&o.SkipIntegration, "skip-integrations", false, "keep the integrations and bindings")
	f.BoolVar(&o.SkipKits, "skip-kits", false, "keep the kits and builds")
	return cmd
}

// Complete resolves the namespace and makes the client.
func (o *ResetOptions) Complete() error {
	return nil
}

// Preamble asks for the namespace and a client.
func (o *ResetOptions) Preamble() (*cmdutil.Cluster, cmdutil.Needs) {
	return &o.Cluster, cmdutil.NeedNamespace | cmdutil.NeedClient
}

// Validate checks the operator id.
func (o *ResetOptions) Validate() error {
	if o.OperatorID != "" {
		if err := ownership.ValidateID(o.OperatorID); err != nil {
			return fmt.Errorf("-x/--operator-id: %w", err)
		}
	}
	if o.SkipIntegration && o.SkipKits {
		return errors.New("--skip-integrations and --skip-kits together leave nothing to reset")
	}
	return nil
}

// Run lists each kind and deletes what it selects, printing a line each and a count.
func (o *ResetOptions) Run(ctx context.Context) error {
	var opts []client.ListOption
	if !o.AllNamespaces {
		opts = append(opts, client.InNamespace(o.Namespace))
	}
	var deleteOpts []client.DeleteOption
	if o.DryRun.Server() {
		deleteOpts = append(deleteOpts, client.DryRunAll)
	}
	deleted, failed := 0, 0
	var errs []string
	for _, k := range resetKinds {
		if k.kit && o.SkipKits || !k.kit && o.SkipIntegration {
			continue
		}
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
		if err := o.Client.List(ctx, list, opts...); err != nil {
			return fmt.Errorf("listing %ss: %w", k.name, err)
		}
		items := slices.DeleteFunc(list.Items, func(m metav1.PartialObjectMetadata) bool {
			return o.OperatorID != "" && m.Annotations[camelv1.OperatorIDAnnotation] != o.OperatorID ||
				k.name == "integration" && reassign.Binding(&m) != "" // it goes with its binding
		})
		for i := range items {
			m := &items[i]
			m.SetGroupVersionKind(k.gvk)
			where := m.Namespace + "/" + m.Name
			if o.DryRun.Client() {
				fmt.Fprintf(o.Out, "%s %s would be deleted (dry run)\n", k.name, where)
				deleted++
				continue
			}
			// The resourceVersion read: one moved to another operator meanwhile is not deleted.
			precondition := client.Preconditions{UID: &m.UID, ResourceVersion: &m.ResourceVersion}
			err := o.Client.Delete(ctx, m, append([]client.DeleteOption{precondition}, deleteOpts...)...)
			switch {
			case apierrors.IsNotFound(err):
			case apierrors.IsConflict(err):
				fmt.Fprintf(o.ErrOut, "%s %s changed meanwhile: left alone\n", k.name, where)
			case err != nil:
				failed++
				errs = append(errs, fmt.Sprintf("%s %s: %v", k.name, where, err))
			default:
				deleted++
				suffix := ""
				if o.DryRun.Server() {
					suffix = " (server dry run)"
				}
				fmt.Fprintf(o.Out, "%s %s deleted%s\n", k.name, where, suffix)
			}
		}
	}
	verb := "deleted"
	if o.DryRun.Any() {
		verb = "would delete"
	}
	fmt.Fprintf(o.Out, "%s %d resources; %d failed\n", verb, deleted, failed)
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}
