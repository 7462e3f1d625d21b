// Package apply turns typed objects into server-side apply configurations.
package apply

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Configuration converts obj, which must have its TypeMeta set, into an
// apply configuration holding exactly the fields obj sets. Status and the
// server-managed creationTimestamp are dropped: an apply only states what
// its manager wants of the spec and metadata.
func Configuration(obj runtime.Object) (runtime.ApplyConfiguration, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %T for apply: %w", obj, err)
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetAPIVersion() == "" || u.GetKind() == "" {
		return nil, fmt.Errorf("applying %T: apiVersion and kind must be set", obj)
	}
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return client.ApplyConfigurationFromUnstructured(u), nil
}

// Stored converts into obj what an apply of cfg answered with: the object
// as the API server stored it, status included. cfg must come from
// Configuration and have been applied.
func Stored(cfg runtime.ApplyConfiguration, obj runtime.Object) error {
	u, ok := cfg.(runtime.Unstructured)
	if !ok {
		return fmt.Errorf("reading an applied object: %T does not hold one", cfg)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), obj); err != nil {
		return fmt.Errorf("reading the applied %s: %w", u.GetObjectKind().GroupVersionKind().Kind, err)
	}
	return nil
}
