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
	"github.com/caravan-dev/caravan/internal/reassign"
)

// DeleteOptions are the options of `caravan delete`.
type DeleteOptions struct {
	selectionCommand
}

// NewCmdDelete builds `caravan delete`, which deletes integrations.
func NewCmdDelete(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &DeleteOptions{selectionCommand{Cluster: cmdutil.Cluster{Kube: kube}, IOStreams: streams}}
	cmd := &cobra.Command{
		Use:   "delete NAME... | --all",
		Short: "Delete integrations",
		Long: `Delete integrations of the namespace, by name or all of them. With
-x/--operator-id only the integrations assigned to that operator are deleted:
a named integration assigned to another operator is left alone and reported.
An integration made from a Pipe or a KameletBinding is left alone too: delete
the binding instead. Their children (Deployments, ConfigMaps, Services) go
with them; kits stay.`,
		Example: `  # Delete two integrations
  caravan delete hello world

  # Delete every integration of the operator tenant-a in the namespace apps
  caravan delete --all -x tenant-a -n apps`,
	}
	return o.bind(cmd, "delete", o)
}

// Run deletes the selected integrations, then reports the ones that were
// missing or left alone.
func (o *DeleteOptions) Run(ctx context.Context) error {
	return o.each(ctx, "delete", func(it *camelv1.Integration) error {
		if binding := managingBinding(it); binding != "" {
			msg := fmt.Sprintf("integration %q is made from %s: delete that instead", it.Name, binding)
			if !o.All {
				return errors.New(msg)
			}
			fmt.Fprintf(o.ErrOut, "Skipped: %s\n", msg)
			return nil
		}
		err := o.delete(ctx, o.Client, it)
		switch {
		case apierrors.IsNotFound(err):
			if !o.All {
				return fmt.Errorf("integration %q was deleted by someone else", it.Name)
			}
		case errors.Is(err, errMoved):
			return err
		case err != nil:
			return fmt.Errorf("deleting integration %q: %w", it.Name, err)
		default:
			fmt.Fprintf(o.Out, "integration %q deleted\n", it.Name)
		}
		return nil
	})
}

// errMoved marks an integration that left the operator selected with -x.
var errMoved = errors.New("moved to another operator")

// delete deletes one integration. With -x the delete carries the
// resourceVersion read, so an integration moved meanwhile to another
// operator is never deleted; a conflict is retried after a new read.
func (o *DeleteOptions) delete(ctx context.Context, c client.Client, it *camelv1.Integration) error {
	if o.OperatorID == "" {
		return c.Delete(ctx, it, client.Preconditions{UID: &it.UID})
	}
	err := o.retryOnConflict(ctx, c, it, func() error {
		return c.Delete(ctx, it, client.Preconditions{UID: &it.UID, ResourceVersion: &it.ResourceVersion})
	})
	if errors.Is(err, errMoved) {
		return fmt.Errorf("integration %q: %w", it.Name, err)
	}
	return err
}

// managingBinding names the Pipe or KameletBinding that controls the
// integration, or "".
func managingBinding(it *camelv1.Integration) string { return reassign.Binding(it) }
