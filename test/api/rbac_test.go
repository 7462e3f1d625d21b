package api_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/caravan-dev/caravan/config/rbac"
	"github.com/caravan-dev/caravan/internal/install"
)

// TestTheOperatorRulesAreSplitByTheirScopeOnTheAPIServer: an operator
// limited to namespaces gets its rights on namespaced resources only in
// those namespaces; the split must agree with the API server on which of
// the operator's resources are cluster-scoped, or a limited operator
// would lose a right, or keep one cluster-wide.
func TestTheOperatorRulesAreSplitByTheirScopeOnTheAPIServer(t *testing.T) {
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	namespaced := map[schema.GroupResource]bool{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			namespaced[schema.GroupResource{Group: gv.Group, Resource: r.Name}] = r.Namespaced
		}
	}
	rules, err := rbac.OperatorRules()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, rule := range rules {
		for _, group := range rule.APIGroups {
			for _, res := range rule.Resources {
				base, _, _ := strings.Cut(res, "/")
				isNamespaced, served := namespaced[schema.GroupResource{Group: group, Resource: base}]
				if !served {
					// A rule may name a resource in two groups (events in
					// "" and events.k8s.io); each group serves its own.
					if len(rule.APIGroups) > 1 {
						continue
					}
					t.Errorf("the operator's rules name %s in group %q, which the API server does not serve", res, group)
					continue
				}
				checked++
				if install.IsClusterScoped(res) == isNamespaced {
					t.Errorf("%s in group %q: the API server says namespaced=%t, the install splits it as cluster-scoped=%t",
						res, group, isNamespaced, install.IsClusterScoped(res))
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no resource of the operator's rules was checked")
	}
}
