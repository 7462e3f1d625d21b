package install

import (
	"context"
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// ForeignLabel marks, with an operator id, the ClusterRole and ClusterRoleBindings that declare
// an operator that is not Caravan's (caravan grant --as-operator).
const ForeignLabel = "caravan.dev/foreign-operator"

// ForeignRole is the ClusterRole that declares operator id not Caravan's: the verb use on id, so
// that it may assign to itself what it creates, and ForeignVerb, under which
// ForeignConfinementPolicy confines it.
func ForeignRole(id string) string { return "caravan:foreign-operator:" + id }

// ForeignRoleManifest is ForeignRole(id) with its rules.
func ForeignRoleManifest(id string) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"),
		ObjectMeta: metav1.ObjectMeta{Name: ForeignRole(id), Labels: foreignLabels(id)},
		Rules: []rbacv1.PolicyRule{
			UseRule(id),
			{APIGroups: []string{camelv1.GroupVersion.Group}, Resources: []string{"integrationoperators"},
				Verbs: []string{ForeignVerb}},
		},
	}
}

// ForeignBinding binds ForeignRole(id) to subject s, in every namespace.
func ForeignBinding(id string, s rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
		ObjectMeta: metav1.ObjectMeta{Name: ForeignRole(id) + ":" + SubjectName(s), Labels: foreignLabels(id)},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ForeignRole(id)},
		Subjects:   []rbacv1.Subject{s},
	}
}

// SubjectName is s as the names of Caravan's bindings end: KIND:NAME, or
// serviceaccount:NAMESPACE:NAME.
func SubjectName(s rbacv1.Subject) string {
	if s.Kind == rbacv1.ServiceAccountKind {
		return "serviceaccount:" + s.Namespace + ":" + s.Name
	}
	return strings.ToLower(s.Kind) + ":" + s.Name
}

func foreignLabels(id string) map[string]string {
	return map[string]string{"app.kubernetes.io/managed-by": "caravan", ForeignLabel: id}
}

// refuseForeign refuses a Caravan operator whose id is declared an operator that is not Caravan's:
// both would reconcile what names the id.
func (i *Installer) refuseForeign(ctx context.Context, id string) error {
	err := i.Client.Get(ctx, client.ObjectKey{Name: ForeignRole(id)}, &rbacv1.ClusterRole{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the ClusterRole %s: %w", ForeignRole(id), err)
	}
	return fmt.Errorf("operator id %q is declared an operator that is not Caravan's (ClusterRole %s): a Caravan operator of that id "+
		"would reconcile what it runs; choose another id, or, once that operator is gone, revoke it (caravan grant -x %s --as-operator --revoke --to ...)",
		id, ForeignRole(id), id)
}

// refuseAllBesideForeign refuses to remove the CRDs while an operator that is not Caravan's is
// declared: it runs on them, and their removal would delete every resource it runs.
func (i *Installer) refuseAllBesideForeign(ctx context.Context) error {
	roles := &rbacv1.ClusterRoleList{}
	if err := i.Client.List(ctx, roles, client.HasLabels{ForeignLabel}); err != nil {
		return fmt.Errorf("listing the operators that are not Caravan's: %w", err)
	}
	if len(roles.Items) == 0 {
		return nil
	}
	id := roles.Items[0].Labels[ForeignLabel]
	return fmt.Errorf("operator %s, which is not Caravan's, is declared (ClusterRole %s) and runs on the CRDs that --all removes, "+
		"with every resource of theirs, its own too: uninstall without --all, or first revoke it (caravan grant -x %s --as-operator --revoke --to ...)",
		id, roles.Items[0].Name, id)
}
