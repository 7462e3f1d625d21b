package controller

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// HandLabelOver moves obj's operator-id label to the operator its annotation names now, or removes
// it. obj's annotation no longer names this operator. The patch carries the resourceVersion read: a
// resource changed meanwhile is left to its newer version. It is the last write of an operator that
// releases a resource.
func HandLabelOver(ctx context.Context, c client.Client, obj client.Object) error {
	var label any // removed when the resource names no operator
	to := ownership.AssignedID(obj.GetAnnotations())
	if to != "" {
		label = to
	}
	err := PatchLabel(ctx, c, obj, label)
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil // changed meanwhile; the newer version decides
	}
	if err != nil {
		return fmt.Errorf("handing the label over to %q: %w", to, err)
	}
	return nil
}

// PatchLabel sets the operator-id label of obj to label, or removes it when label is nil. The merge
// patch carries the resourceVersion read, so that a resource changed meanwhile is refused with a
// conflict.
func PatchLabel(ctx context.Context, c client.Client, obj client.Object, label any) error {
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": obj.GetResourceVersion(),
		"labels":          map[string]any{camelv1.OperatorIDLabel: label},
	}})
	if err != nil {
		return err
	}
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data))
}
