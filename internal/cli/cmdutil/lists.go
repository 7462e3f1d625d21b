package cmdutil

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
)

// ListItems returns the items of a typed list as client objects.
func ListItems(list client.ObjectList) ([]client.Object, error) {
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	objs := make([]client.Object, 0, len(items))
	for _, item := range items {
		obj, ok := item.(client.Object)
		if !ok {
			return nil, fmt.Errorf("unexpected list item %T", item)
		}
		objs = append(objs, obj)
	}
	return objs, nil
}

// CompleteOperatorIDs completes an operator id from the registered
// IntegrationOperators.
func CompleteOperatorIDs(kube *KubeFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return CompleteNames(cmd.Context(), kube, &camelv1alpha1.IntegrationOperatorList{}, false), cobra.ShellCompDirectiveNoFileComp
	}
}

// CompleteNames lists the names of the objects of a list type, in the
// namespace of the kube flags when namespaced; errors complete nothing.
func CompleteNames(ctx context.Context, kube *KubeFlags, list client.ObjectList, namespaced bool) []cobra.Completion {
	if ctx == nil {
		ctx = context.Background()
	}
	c := &Cluster{Kube: kube}
	needs := NeedClient
	if namespaced {
		needs |= NeedNamespace
	}
	if err := c.Connect(needs); err != nil {
		return nil
	}
	var opts []client.ListOption
	if namespaced {
		opts = append(opts, client.InNamespace(c.Namespace))
	}
	if err := c.Client.List(ctx, list, opts...); err != nil {
		return nil
	}
	objs, err := ListItems(list)
	if err != nil {
		return nil
	}
	names := make([]cobra.Completion, 0, len(objs))
	for _, obj := range objs {
		names = append(names, obj.GetName())
	}
	return names
}

// CountOwnedIntegrations counts, by operator id, the integrations of all
// namespaces labelled with one of ids: one list of metadata only, selected
// by the API server.
func CountOwnedIntegrations(ctx context.Context, c client.Client, ids []string) (map[string]int, error) {
	counts := make(map[string]int, len(ids))
	if len(ids) == 0 {
		return counts, nil
	}
	req, err := labels.NewRequirement(camelv1.OperatorIDLabel, selection.In, ids)
	if err != nil {
		return nil, err
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(camelv1.GroupVersion.WithKind("IntegrationList"))
	if err := c.List(ctx, list, client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*req)}); err != nil {
		return nil, fmt.Errorf("counting the integrations of the operators: %w", err)
	}
	for _, item := range list.Items {
		counts[item.Labels[camelv1.OperatorIDLabel]]++
	}
	return counts, nil
}
