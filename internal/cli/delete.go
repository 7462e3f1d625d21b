package cli

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
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// DeleteOptions are the options of `caravan delete`.
type DeleteOptions struct {
	Kube *KubeFlags
	integrationSelection

	// Set by Complete.
	namespace string
	client    client.Client

	genericiooptions.IOStreams
}

func newCmdDelete(kube *KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &DeleteOptions{Kube: kube, IOStreams: streams}
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
	cmd.Flags().BoolVar(&o.All, "all", false, "delete every integration of the namespace (with -x, every one of that operator)")
	cmd.Flags().StringVarP(&o.OperatorID, "operator-id", "x", "", "only delete integrations assigned to this operator")
	return cmd
}

// Complete resolves the namespace and makes the client.
func (o *DeleteOptions) Complete() error {
	ns, err := o.Kube.Namespace()
	if err != nil {
		return err
	}
	o.namespace = ns
	o.client, err = o.Kube.Client()
	return err
}

// Validate checks the arguments and flags.
func (o *DeleteOptions) Validate() error { return o.validate() }

// Run deletes the selected integrations, then reports the ones that were
// missing or left alone.
func (o *DeleteOptions) Run(ctx context.Context) error {
	c := o.client
	selected, problems, err := o.resolve(ctx, c, o.namespace)
	if err != nil {
		return err
	}
	if o.All && len(selected) == 0 {
		fmt.Fprintf(o.ErrOut, "No integrations to delete in namespace %s%s.\n", o.namespace, o.forOperator())
	}
	for i := range selected {
		it := &selected[i]
		if binding := managingBinding(it); binding != "" {
			msg := fmt.Sprintf("integration %q is made from %s: delete that instead", it.Name, binding)
			if o.All {
				fmt.Fprintf(o.ErrOut, "Skipped: %s\n", msg)
			} else {
				problems = append(problems, msg)
			}
			continue
		}
		err := o.delete(ctx, c, it)
		switch {
		case apierrors.IsNotFound(err):
			if !o.All {
				problems = append(problems, fmt.Sprintf("integration %q was deleted by someone else", it.Name))
			}
		case errors.Is(err, errMoved):
			problems = append(problems, err.Error())
		case err != nil:
			problems = append(problems, fmt.Sprintf("deleting integration %q: %v", it.Name, err))
		default:
			fmt.Fprintf(o.Out, "integration %q deleted\n", it.Name)
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
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
	first := true
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := c.Get(ctx, client.ObjectKeyFromObject(it), it); err != nil {
				return err
			}
			if it.OperatorID() != o.OperatorID {
				return fmt.Errorf("integration %q was %w %q, left alone", it.Name, errMoved, it.OperatorID())
			}
		}
		first = false
		return c.Delete(ctx, it, client.Preconditions{UID: &it.UID, ResourceVersion: &it.ResourceVersion})
	})
}

// integrationSelection picks integrations of a namespace by name or with
// --all, optionally only those assigned to one operator. delete and
// rebuild share it.
type integrationSelection struct {
	Names      []string
	All        bool
	OperatorID string
}

func (s *integrationSelection) validate() error {
	switch {
	case s.All && len(s.Names) > 0:
		return errors.New("give integration names or --all, not both")
	case !s.All && len(s.Names) == 0:
		return errors.New("give the names of the integrations, or --all")
	}
	if s.OperatorID != "" {
		return validateOperatorIDFlag("-x/--operator-id", s.OperatorID)
	}
	return nil
}

func (s *integrationSelection) forOperator() string {
	if s.OperatorID == "" {
		return ""
	}
	return fmt.Sprintf(" assigned to operator %q", s.OperatorID)
}

// resolve reads the selected integrations. Named integrations that do not
// exist, or are assigned to another operator than -x, are problems to
// report once the others are done.
func (s *integrationSelection) resolve(ctx context.Context, c client.Reader, ns string) ([]camelv1.Integration, []string, error) {
	if s.All {
		list := &camelv1.IntegrationList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, nil, fmt.Errorf("listing integrations in namespace %s: %w", ns, err)
		}
		items := slices.DeleteFunc(list.Items, func(it camelv1.Integration) bool {
			return s.OperatorID != "" && it.OperatorID() != s.OperatorID
		})
		return items, nil, nil
	}
	var selected []camelv1.Integration
	var missing, problems []string
	for _, name := range slices.Compact(slices.Sorted(slices.Values(s.Names))) {
		it := &camelv1.Integration{}
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, it)
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, fmt.Sprintf("%q", name))
		case err != nil:
			return nil, nil, fmt.Errorf("reading integration %q: %w", name, err)
		case s.OperatorID != "" && it.OperatorID() != s.OperatorID:
			problems = append(problems, fmt.Sprintf("integration %q is assigned to operator %q, not %q: left alone", name, it.OperatorID(), s.OperatorID))
		default:
			selected = append(selected, *it)
		}
	}
	if len(missing) > 0 {
		problems = append([]string{fmt.Sprintf("integrations not found in namespace %s: %s", ns, strings.Join(missing, ", "))}, problems...)
	}
	return selected, problems, nil
}

// managingBinding names the Pipe or KameletBinding that controls the
// integration, or "".
func managingBinding(it *camelv1.Integration) string {
	ref := metav1.GetControllerOf(it)
	if ref == nil {
		return ""
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != camelv1.GroupVersion.Group || (ref.Kind != kindPipe && ref.Kind != kindKameletBinding) {
		return ""
	}
	return fmt.Sprintf("%s %q", ref.Kind, ref.Name)
}
