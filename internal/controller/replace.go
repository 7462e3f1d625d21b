package controller

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReplaceForeign replaces an object another operator (Camel K's) made with want, and returns it
// as stored. It is an update of the whole object, read from reader for its version, so that
// nothing the other operator set stays (an apply would keep the fields only its field manager
// owns), with its managed fields cleared, so that fieldManager's applies own every field from then on.
func ReplaceForeign[T client.Object](ctx context.Context, c client.Client, reader client.Reader, want T, fieldManager string) (T, error) {
	replacement := want.DeepCopyObject().(T)
	current := want.DeepCopyObject().(T)
	if err := reader.Get(ctx, client.ObjectKeyFromObject(want), current); err != nil {
		return replacement, err
	}
	replacement.SetResourceVersion(current.GetResourceVersion())
	replacement.SetManagedFields([]metav1.ManagedFieldsEntry{{}})
	err := c.Update(ctx, replacement, client.FieldOwner(fieldManager))
	return replacement, err
}
