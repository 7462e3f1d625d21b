package install

import (
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/config/rbac"
)

// OperatorNamespaceLabel marks what one installation owns alone with its namespace.
// app.kubernetes.io/instance holds the id, so that uninstall, re-installs and upgrades find
// all of it.
const OperatorNamespaceLabel = "caravan.dev/operator-namespace"

// ClusterRoleName names the ClusterRole and ClusterRoleBinding of operator
// id installed in namespace, and its RoleBindings in the namespaces it
// serves. They carry the namespace, so that an install of the same id in
// another namespace never rebinds this one's rights.
func ClusterRoleName(id, namespace string) string {
	return "caravan:operator:" + namespace + ":" + id
}

// NamespacedRoleName names the ClusterRole that holds the rights on
// namespaced resources of an operator limited to some namespaces; only
// RoleBindings in those namespaces grant it.
func NamespacedRoleName(id, namespace string) string {
	return ClusterRoleName(id, namespace) + ":namespaced"
}

// SecretsRoleName names the Role, and its RoleBinding, in the operator's
// namespace that lets it read Secrets and run builder pods there. The
// Secrets include the registry Secret its platform names; the operator
// has neither right anywhere else.
func SecretsRoleName(id, namespace string) string {
	return ClusterRoleName(id, namespace) + ":secrets"
}

// ownNamespaceOnly are the resources of the operator's rules it gets
// rights on in its own namespace only: Secrets, the writes of pods (its
// builder pods) and the creation of Kamelets (its Kamelet catalog). It
// reads pods wherever it serves, to tell why an integration's pods fail,
// and reads and labels Kamelets wherever it serves.
var ownNamespaceOnly = map[string]bool{"secrets": true, "pods": true, "kamelets": true}

// sharedVerbs are the verbs on a resource of ownNamespaceOnly that the
// operator holds in every namespace it serves nonetheless.
var sharedVerbs = map[string][]string{"pods": {"list"}, "kamelets": {"get", "list", "watch", "patch"}}

// splitOwn splits rules into those the operator gets in its own
// namespace only and the rest.
func splitOwn(rules []rbacv1.PolicyRule) (own, rest []rbacv1.PolicyRule) {
	own, rest = splitRules(rules, ownNamespaceOnly)
	for _, r := range own {
		for _, res := range r.Resources {
			var shared []string
			for _, v := range r.Verbs {
				if slices.Contains(sharedVerbs[res], v) {
					shared = append(shared, v)
				}
			}
			if len(shared) > 0 {
				s := r
				s.Resources, s.Verbs = []string{res}, shared
				rest = append(rest, s)
			}
		}
	}
	return own, rest
}

// clusterScoped are the cluster-scoped resources of the operator's rules.
var clusterScoped = map[string]bool{
	"integrationoperators": true, "integrationoperators/status": true,
	"mutatingadmissionpolicies": true, "mutatingadmissionpolicybindings": true,
	"tokenreviews": true, "subjectaccessreviews": true,
}

// IsClusterScoped tells whether resource (as a rule names it, with its
// subresource) of the operator's rules is cluster-scoped.
func IsClusterScoped(resource string) bool { return clusterScoped[resource] }

// splitRules splits rules in two by whether in tells a resource apart.
func splitRules(rules []rbacv1.PolicyRule, in map[string]bool) (matching, rest []rbacv1.PolicyRule) {
	for _, r := range rules {
		m, o := r, r
		m.Resources, o.Resources = nil, nil
		for _, res := range r.Resources {
			if in[res] {
				m.Resources = append(m.Resources, res)
			} else {
				o.Resources = append(o.Resources, res)
			}
		}
		if len(m.Resources) > 0 {
			matching = append(matching, m)
		}
		if len(o.Resources) > 0 {
			rest = append(rest, o)
		}
	}
	return matching, rest
}

// UseRule grants the verb use on operator id, which assigning a resource
// to it needs (AssignmentPolicy).
func UseRule(id string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{camelv1.GroupVersion.Group},
		Resources: []string{"integrationoperators"}, ResourceNames: []string{id}, Verbs: []string{"use"}}
}

// ServedNamespaces are the namespaces an operator of namespace own that
// watches watch gets rights in: its own and the watched ones, sorted.
func ServedNamespaces(own string, watch []string) []string {
	ns := append([]string{own}, watch...)
	sort.Strings(ns)
	return slices.Compact(ns)
}

// OLMPermissions are the operator's rules as an OLM bundle states them. cluster, its
// clusterPermissions, are the rules on cluster-scoped resources and the use of its own id, which
// OLM grants cluster-wide. namespaced, its permissions, are the rest, its own namespace's
// included: OLM grants them in each namespace it targets, or cluster-wide for all namespaces.
func OLMPermissions(id string) (cluster, namespaced []rbacv1.PolicyRule, err error) {
	rules, err := rbac.OperatorRules()
	if err != nil {
		return nil, nil, err
	}
	own, rest := splitOwn(rules)
	cluster, namespaced = splitRules(rest, clusterScoped)
	return append(cluster, UseRule(id)), append(namespaced, own...), nil
}

// rbacManifests are the operator's ServiceAccount and rights. It reads
// Secrets in its own namespace only, by a Role there. An operator of every
// namespace gets its other rights from one ClusterRole, bound
// cluster-wide. An operator limited to namespaces gets its rights on
// cluster-scoped resources cluster-wide, and those on namespaced
// resources only in its own namespace and the ones it watches, by
// RoleBindings there.
func rbacManifests(c Config) ([]client.Object, error) {
	rules, err := rbac.OperatorRules()
	if err != nil {
		return nil, err
	}
	name, clusterName := operatorName(c.ID), ClusterRoleName(c.ID, c.Namespace)
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: c.Namespace}}
	sa := &corev1.ServiceAccount{TypeMeta: typeMeta("v1", "ServiceAccount"),
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.Namespace, Labels: installationLabels(c)}}
	objs := []client.Object{sa}
	ownRules, rules := splitOwn(rules)
	clusterRules, namespacedRules := rules, []rbacv1.PolicyRule(nil)
	if len(c.WatchNamespaces) > 0 {
		clusterRules, namespacedRules = splitRules(rules, clusterScoped)
	}
	// The operator may assign resources to itself (its Integrations made
	// from Pipes, its kits, its adoptions as the default operator).
	clusterRules = append(clusterRules, UseRule(c.ID))
	objs = append(objs,
		&rbacv1.ClusterRole{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"),
			ObjectMeta: metav1.ObjectMeta{Name: clusterName, Labels: installationLabels(c)}, Rules: clusterRules},
		&rbacv1.ClusterRoleBinding{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
			ObjectMeta: metav1.ObjectMeta{Name: clusterName, Labels: installationLabels(c)},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterName},
			Subjects:   subjects})
	secrets := SecretsRoleName(c.ID, c.Namespace)
	objs = append(objs,
		&rbacv1.Role{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "Role"),
			ObjectMeta: metav1.ObjectMeta{Name: secrets, Namespace: c.Namespace, Labels: installationLabels(c)}, Rules: ownRules},
		&rbacv1.RoleBinding{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "RoleBinding"),
			ObjectMeta: metav1.ObjectMeta{Name: secrets, Namespace: c.Namespace, Labels: installationLabels(c)},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: secrets},
			Subjects:   subjects})
	if len(namespacedRules) > 0 {
		nsRole := NamespacedRoleName(c.ID, c.Namespace)
		objs = append(objs, &rbacv1.ClusterRole{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"),
			ObjectMeta: metav1.ObjectMeta{Name: nsRole, Labels: installationLabels(c)}, Rules: namespacedRules})
		for _, ns := range ServedNamespaces(c.Namespace, c.WatchNamespaces) {
			objs = append(objs, &rbacv1.RoleBinding{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "RoleBinding"),
				ObjectMeta: metav1.ObjectMeta{Name: clusterName, Namespace: ns, Labels: installationLabels(c)},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: nsRole},
				Subjects:   subjects})
		}
	}
	user := &rbacv1.ClusterRole{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"),
		ObjectMeta: metav1.ObjectMeta{Name: UserRole(c.ID), Labels: Labels(c.ID)},
		Rules:      []rbacv1.PolicyRule{UseRule(c.ID)}}
	reader := &rbacv1.ClusterRole{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"),
		ObjectMeta: metav1.ObjectMeta{Name: ReaderRole, Labels: map[string]string{
			"rbac.authorization.k8s.io/aggregate-to-view":  "true",
			"rbac.authorization.k8s.io/aggregate-to-edit":  "true",
			"rbac.authorization.k8s.io/aggregate-to-admin": "true",
		}},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{camelv1.GroupVersion.Group},
			Resources: []string{"integrationplatforms", "integrationoperators"}, Verbs: []string{"get", "list", "watch"}}}}
	readerBinding := &rbacv1.ClusterRoleBinding{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
		ObjectMeta: metav1.ObjectMeta{Name: ReaderRole},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ReaderRole},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:authenticated"}}}
	return append(append(objs, user, reader, readerBinding), sharedRoles()...), nil
}

// sharedRoles are the ClusterRoles every installation shares: the teams' and MetricsReaderRole.
func sharedRoles() []client.Object {
	return append(teamRoles(), &rbacv1.ClusterRole{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"),
		ObjectMeta: metav1.ObjectMeta{Name: MetricsReaderRole}, Rules: MetricsReaderRules()})
}

// MetricsReaderRules let a caller get the operators' metrics and profiles.
func MetricsReaderRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics", "/debug/pprof", "/debug/pprof/*"}, Verbs: []string{"get"}}}
}

// teamRoles are ViewRole and EditRole, aggregated into Kubernetes' view, edit and admin roles.
func teamRoles() []client.Object {
	group := []string{camelv1.GroupVersion.Group}
	aggregate := func(to ...string) map[string]string {
		labels := map[string]string{}
		for _, role := range to {
			labels["rbac.authorization.k8s.io/aggregate-to-"+role] = "true"
		}
		return labels
	}
	read := []string{"get", "list", "watch"}
	return []client.Object{
		&rbacv1.ClusterRole{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"),
			ObjectMeta: metav1.ObjectMeta{Name: ViewRole, Labels: aggregate("view", "edit", "admin")},
			Rules: []rbacv1.PolicyRule{{APIGroups: group, Verbs: read, Resources: []string{
				"integrations", "integrations/status", "pipes", "pipes/status", "kameletbindings", "kameletbindings/status",
				"kamelets", "kamelets/status", "integrationkits", "integrationkits/status", "builds", "builds/status",
				"integrationprofiles", "integrationprofiles/status", "camelcatalogs", "camelcatalogs/status"}}}},
		&rbacv1.ClusterRole{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"),
			ObjectMeta: metav1.ObjectMeta{Name: EditRole, Labels: aggregate("edit", "admin")},
			Rules: []rbacv1.PolicyRule{{APIGroups: group, Verbs: []string{"create", "update", "patch", "delete", "deletecollection"},
				Resources: []string{"integrations", "integrations/scale", "pipes", "pipes/scale", "kameletbindings", "kameletbindings/scale",
					"kamelets", "integrationkits", "integrationprofiles"}}}},
	}
}

// RequiredRules are the rules operator id, installed in namespace own,
// needs in namespace ns, which it serves. In its own namespace, that is
// every rule of the operator; in a namespace it watches, those on
// namespaced resources other than Secrets. They are what rbacManifests
// grants there, and what the operator checks that it holds.
func RequiredRules(id, own, ns string) ([]rbacv1.PolicyRule, error) {
	rules, err := rbac.OperatorRules()
	if err != nil {
		return nil, err
	}
	rules = append(rules, UseRule(id))
	if ns == own {
		return rules, nil
	}
	_, rules = splitOwn(rules)
	_, rules = splitRules(rules, clusterScoped)
	return rules, nil
}
