package install

import (
	"testing"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/caravan-dev/caravan/config/rbac"
)

// grants lists "group/resource verb" for every right of rules.
func grants(rules []rbacv1.PolicyRule) map[string]bool {
	out := map[string]bool{}
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out[g+"/"+res+" "+v] = true
				}
			}
		}
	}
	return out
}

func TestALimitedOperatorHasItsNamespacedRightsOnlyWhereItServes(t *testing.T) {
	g := NewWithT(t)
	objs, err := Manifests(Config{ID: "tenant-a", Namespace: "ops", Image: "img", WatchNamespaces: []string{"team-b", "team-a"}})
	g.Expect(err).NotTo(HaveOccurred())
	roles := map[string]*rbacv1.ClusterRole{}
	var clusterBindings []*rbacv1.ClusterRoleBinding
	var roleBindings []*rbacv1.RoleBinding
	for _, o := range objs {
		switch o := o.(type) {
		case *rbacv1.ClusterRole:
			roles[o.Name] = o
		case *rbacv1.ClusterRoleBinding:
			clusterBindings = append(clusterBindings, o)
		case *rbacv1.RoleBinding:
			roleBindings = append(roleBindings, o)
		}
	}
	for _, b := range clusterBindings {
		if b.RoleRef.Name == ReaderRole {
			continue
		}
		for _, r := range roles[b.RoleRef.Name].Rules {
			for _, res := range r.Resources {
				g.Expect(IsClusterScoped(res)).To(BeTrue(), "%s is granted cluster-wide", res)
			}
		}
	}
	var served []string
	var secrets []rbacv1.PolicyRule
	for _, o := range objs {
		if r, ok := o.(*rbacv1.Role); ok {
			g.Expect(r.Name).To(Equal(SecretsRoleName("tenant-a", "ops")))
			g.Expect(r.Namespace).To(Equal("ops"))
			secrets = r.Rules
		}
	}
	for _, b := range roleBindings {
		if b.RoleRef.Name == ServesRoleName("tenant-a", "ops") {
			continue // the namespaces policy's grant, to its principal (TestOnlyALimitedOperatorGetsNamespacesGrants)
		}
		if b.RoleRef.Kind == "Role" {
			g.Expect(b.Namespace).To(Equal("ops"), "Secrets are read outside the operator's namespace")
			continue
		}
		g.Expect(b.RoleRef).To(Equal(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: NamespacedRoleName("tenant-a", "ops")}))
		g.Expect(b.Subjects).To(ConsistOf(HaveField("Namespace", "ops")))
		served = append(served, b.Namespace)
	}
	g.Expect(served).To(Equal([]string{"ops", "team-a", "team-b"}))

	t.Log("split or not, the operator keeps every right of its rules")
	want, err := rbac.OperatorRules()
	g.Expect(err).NotTo(HaveOccurred())
	got := grants(append(append(roles[ClusterRoleName("tenant-a", "ops")].Rules, roles[NamespacedRoleName("tenant-a", "ops")].Rules...), secrets...))
	g.Expect(grants(roles[NamespacedRoleName("tenant-a", "ops")].Rules)).NotTo(HaveKey("/secrets get"))
	t.Log("it lists the pods of the integrations it serves, and makes pods (its builds') only in its own namespace")
	g.Expect(grants(roles[NamespacedRoleName("tenant-a", "ops")].Rules)).To(HaveKey("/pods list"))
	g.Expect(grants(roles[NamespacedRoleName("tenant-a", "ops")].Rules)).NotTo(HaveKey("/pods create"))
	g.Expect(grants(secrets)).To(HaveKey("/pods create"))
	for right := range grants(want) {
		g.Expect(got).To(HaveKey(right))
	}
}

func TestAnOperatorOfEveryNamespaceHasOneClusterRoleAndReadsSecretsOnlyInItsNamespace(t *testing.T) {
	g := NewWithT(t)
	objs, err := Manifests(Config{ID: "tenant-a", Namespace: "ops", Image: "img"})
	g.Expect(err).NotTo(HaveOccurred())
	for _, o := range objs {
		if b, ok := o.(*rbacv1.RoleBinding); ok {
			g.Expect(b.Name).To(Equal(SecretsRoleName("tenant-a", "ops")), "a RoleBinding other than the Secrets one")
		}
		if r, ok := o.(*rbacv1.ClusterRole); ok {
			g.Expect(r.Name).NotTo(Equal(NamespacedRoleName("tenant-a", "ops")))
			g.Expect(grants(r.Rules)).NotTo(HaveKey("/secrets get"), "%s reads Secrets cluster-wide", r.Name)
		}
	}
}
