package api_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// TestMintedUsersAreAuthorisedByTheirGroups checks the harness's minted
// users: the API server sees their groups, and RBAC applies to them.
func TestMintedUsersAreAuthorisedByTheirGroups(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "viewers", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view-integrations"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "team-a"}},
	}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "view-integrations"},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{camelv1.GroupVersion.Group}, Resources: []string{"integrations"},
			Verbs: []string{"get", "list"},
		}},
	}
	g.Expect(env.Client.Create(ctx, role)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, role) })
	g.Expect(env.Client.Create(ctx, binding)).To(Succeed())

	member := env.UserClient(t, "alice", "team-a")
	outsider := env.UserClient(t, "bob", "team-b")

	g.Eventually(func() error {
		return member.List(ctx, &camelv1.IntegrationList{}, client.InNamespace(ns))
	}).Should(Succeed())
	err := outsider.List(ctx, &camelv1.IntegrationList{}, client.InNamespace(ns))
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring(`User "bob"`))
	err = member.Create(ctx, &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: ns}})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the role grants no create, got %v", err)
}
