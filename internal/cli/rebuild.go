package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// RebuildRequestedAnnotation records when `caravan rebuild` last asked for
// an integration to be re-initialised. Writing it is what wakes the
// operator: the integration controller does not react to status-only
// changes, such as the cleared digest.
const RebuildRequestedAnnotation = "camel.apache.org/rebuild-requested-at"

// RebuildOptions are the options of `caravan rebuild`.
type RebuildOptions struct {
	Kube *KubeFlags
	integrationSelection

	// Set by Complete.
	namespace string
	client    client.Client
	now       func() time.Time

	genericiooptions.IOStreams
}

func newCmdRebuild(kube *KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &RebuildOptions{Kube: kube, now: time.Now, IOStreams: streams}
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
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Names = args
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.Flags().BoolVar(&o.All, "all", false, "rebuild every integration of the namespace (with -x, every one of that operator)")
	cmd.Flags().StringVarP(&o.OperatorID, "operator-id", "x", "", "only rebuild integrations assigned to this operator")
	return cmd
}

// Complete resolves the namespace and makes the client.
func (o *RebuildOptions) Complete() error {
	ns, err := o.Kube.Namespace()
	if err != nil {
		return err
	}
	o.namespace = ns
	o.client, err = o.Kube.Client()
	return err
}

// Validate checks the arguments and flags.
func (o *RebuildOptions) Validate() error { return o.validate() }

// Run rebuilds the selected integrations, then reports the ones that were
// missing or failed.
func (o *RebuildOptions) Run(ctx context.Context) error {
	c := o.client
	selected, problems, err := o.resolve(ctx, c, o.namespace)
	if err != nil {
		return err
	}
	if o.All && len(selected) == 0 {
		fmt.Fprintf(o.ErrOut, "No integrations to rebuild in namespace %s%s.\n", o.namespace, o.forOperator())
	}
	for i := range selected {
		it := &selected[i]
		if err := o.rebuild(ctx, c, it); err != nil {
			problems = append(problems, fmt.Sprintf("rebuilding integration %q: %v", it.Name, err))
			continue
		}
		next := "it is re-initialised once an operator adopts it"
		if id := it.OperatorID(); id != "" {
			next = fmt.Sprintf("operator %q re-initialises it", id)
		}
		fmt.Fprintf(o.Out, "integration %q: digest cleared; %s\n", it.Name, next)
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// rebuild clears status.digest with a patch of the status subresource
// that carries the resourceVersion read (retried after a new read on a
// conflict), then stamps the request annotation.
func (o *RebuildOptions) rebuild(ctx context.Context, c client.Client, it *camelv1.Integration) error {
	first := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := c.Get(ctx, client.ObjectKeyFromObject(it), it); err != nil {
				return err
			}
			if o.OperatorID != "" && it.OperatorID() != o.OperatorID {
				return fmt.Errorf("it was %w %q meanwhile, left alone", errMoved, it.OperatorID())
			}
		}
		first = false
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
