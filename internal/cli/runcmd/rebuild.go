package runcmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
)

// RebuildRequestedAnnotation records when `caravan rebuild` last asked for
// an integration to be re-initialised. Writing it is what wakes the
// operator: the integration controller does not react to status-only
// changes, such as the cleared digest.
const RebuildRequestedAnnotation = "camel.apache.org/rebuild-requested-at"

// RebuildOptions are the options of `caravan rebuild`.
type RebuildOptions struct {
	selectionCommand
	now func() time.Time
}

// NewCmdRebuild builds `caravan rebuild`, which has integrations built again.
func NewCmdRebuild(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &RebuildOptions{selectionCommand: selectionCommand{Cluster: cmdutil.Cluster{Kube: kube}, IOStreams: streams}, now: time.Now}
	cmd := &cobra.Command{
		Use:   "rebuild NAME... | --all",
		Short: "Re-initialise integrations",
		Long: `Re-initialise integrations: clear the digest in their status, so that the
operator they are assigned to initialises them again (phase Initialization),
choosing their kit and image anew, and rolls their Deployment if it changed.

The request is recorded in the annotation ` + RebuildRequestedAnnotation + `, which
also wakes the operator. With -x/--operator-id only the integrations assigned to
that operator are rebuilt.`,
		Example: `  # Rebuild one integration
  caravan rebuild hello

  # Rebuild every integration of the operator tenant-a in the namespace apps
  caravan rebuild --all -x tenant-a -n apps`,
	}
	return o.bind(cmd, "rebuild", o)
}

// Run rebuilds the selected integrations, then reports the ones that were
// missing or failed.
func (o *RebuildOptions) Run(ctx context.Context) error {
	return o.each(ctx, "rebuild", func(it *camelv1.Integration) error {
		if err := o.rebuild(ctx, o.Client, it); err != nil {
			return fmt.Errorf("rebuilding integration %q: %w", it.Name, err)
		}
		next := "it is re-initialised once an operator adopts it"
		if id := it.OperatorID(); id != "" {
			next = fmt.Sprintf("operator %q re-initialises it", id)
		}
		fmt.Fprintf(o.Out, "integration %q: digest cleared; %s\n", it.Name, next)
		return nil
	})
}

// rebuild clears status.digest with a patch of the status subresource
// that carries the resourceVersion read (retried after a new read on a
// conflict), then stamps the request annotation.
func (o *RebuildOptions) rebuild(ctx context.Context, c client.Client, it *camelv1.Integration) error {
	err := o.retryOnConflict(ctx, c, it, func() error {
		if it.Status.Digest == "" {
			return nil
		}
		before := it.DeepCopy()
		it.Status.Digest = ""
		return c.Status().Patch(ctx, it, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		return fmt.Errorf("clearing the digest: %w", err)
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, RebuildRequestedAnnotation, o.now().UTC().Format(time.RFC3339Nano))
	if err := c.Patch(ctx, it, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return fmt.Errorf("recording the request: %w", err)
	}
	return nil
}
