package install

import (
	"context"
	"fmt"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// inventoryKinds are the kinds of what an installation owns alone,
// labelled with installationLabels. The registration, the platform, the
// Kamelet catalog and what every operator shares are not among them:
// nothing prunes those.
var inventoryKinds = []schema.GroupVersionKind{
	{Version: "v1", Kind: "ServiceAccount"},
	{Version: "v1", Kind: "Service"},
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"},
}

// inventory lists, by their labels and in every namespace, the objects
// that the installation of id in namespace owns alone and that exist.
func (i *Installer) inventory(ctx context.Context, id, namespace string) ([]client.Object, error) {
	sel := client.MatchingLabels(installationLabels(Config{ID: id, Namespace: namespace}))
	var out []client.Object
	for _, gvk := range inventoryKinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := i.Client.List(ctx, list, sel); err != nil {
			return nil, fmt.Errorf("listing the %ss of operator %s: %w", gvk.Kind, id, err)
		}
		for k := range list.Items {
			list.Items[k].SetGroupVersionKind(gvk)
			out = append(out, &list.Items[k])
		}
	}
	return out, nil
}

// prune deletes what the installation of id in namespace owns and objs,
// the manifests just applied, no longer hold. That is the RoleBindings
// of a namespace no longer watched, the namespaced role of an operator
// that now serves every namespace, and an object an earlier version made
// and this one does not.
func (i *Installer) prune(ctx context.Context, id, namespace string, objs []client.Object) error {
	existing, err := i.inventory(ctx, id, namespace)
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, o := range objs {
		want[describe(o)] = true
	}
	// The id's binding of the namespaces policy of earlier versions.
	existing = append(existing, legacyNamespacesBinding(id))
	for _, o := range existing {
		if want[describe(o)] {
			continue
		}
		deleted, err := i.deleteIfExists(ctx, o)
		if err != nil {
			return fmt.Errorf("pruning %s: %w", describe(o), err)
		}
		if deleted {
			fmt.Fprintf(i.Out, "%s pruned\n", describe(o))
		}
	}
	return i.pruneLegacyNamespaces(ctx)
}

// pruneLegacyNamespaces deletes legacyNamespacesPolicy once no binding of
// it is left.
func (i *Installer) pruneLegacyNamespaces(ctx context.Context) error {
	bindings := &admissionv1.ValidatingAdmissionPolicyBindingList{}
	if err := i.Client.List(ctx, bindings); err != nil {
		return fmt.Errorf("listing the admission policy bindings: %w", err)
	}
	for _, b := range bindings.Items {
		if b.Spec.PolicyName == legacyNamespacesPolicy {
			return nil
		}
	}
	policy := &admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: legacyNamespacesPolicy}}
	deleted, err := i.deleteIfExists(ctx, policy)
	if err != nil {
		return fmt.Errorf("pruning %s: %w", describe(policy), err)
	}
	if deleted {
		fmt.Fprintf(i.Out, "%s pruned: no operator is bound to it any more\n", describe(policy))
	}
	return nil
}
