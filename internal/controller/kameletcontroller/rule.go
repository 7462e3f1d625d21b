package kameletcontroller

import (
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// Validates reports whether the operator self, running in namespace,
// validates a Kamelet with the given namespace and annotations. This is
// the rule:
//
//   - A Kamelet annotated with camel.apache.org/operator.id is validated
//     by the operator it names, and by no other, wherever it lives.
//   - A Kamelet without the annotation (a shared catalog entry, the usual
//     case) is validated by the operators that run in its namespace. When
//     several operators share that namespace they all validate it; the
//     status they compute is the same, since it depends on the Kamelet only.
//   - Any other Kamelet is validated by nobody: it is still usable by a
//     binding, which checks the Kamelets it uses when it compiles.
func Validates(namespace string, annotations map[string]string, self, operatorNamespace string) bool {
	if id := ownership.AssignedID(annotations); id != "" {
		return id == self
	}
	return namespace == operatorNamespace
}

// CacheByObject is how the operator's cache watches Kamelets: exactly those the rule of Validates
// may give it. That costs no more than its own share: every Kamelet of the operator's namespace
// (catalog entries are not annotated), and, in the other namespaces it serves (watch; all when
// empty), only those labelled for it. The label mirrors the annotation (SetupLabelMirror). One
// informer per namespace configuration: the cache allows a label selector per namespace, and
// cache.AllNamespaces stands for the namespaces not listed.
func CacheByObject(id, namespace string, watch []string) cache.ByObject {
	mine := cache.Config{LabelSelector: labels.SelectorFromSet(labels.Set{camelv1.OperatorIDLabel: id})}
	namespaces := map[string]cache.Config{}
	if len(watch) == 0 {
		namespaces[cache.AllNamespaces] = mine
	}
	for _, ns := range watch {
		namespaces[ns] = mine
	}
	namespaces[namespace] = cache.Config{LabelSelector: labels.Everything()}
	return cache.ByObject{Namespaces: namespaces}
}
