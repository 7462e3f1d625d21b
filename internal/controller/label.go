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
	return patchMetadata(ctx, c, obj, "labels", camelv1.OperatorIDLabel, label)
}

// PatchAssignment sets the operator-id annotation of obj to id, with the resourceVersion read, as
// PatchLabel does.
func PatchAssignment(ctx context.Context, c client.Client, obj client.Object, id string) error {
	return patchMetadata(ctx, c, obj, "annotations", camelv1.OperatorIDAnnotation, id)
}

// patchMetadata sets key of obj's metadata field (labels or annotations) to value, or removes it
// when value is nil, by a merge patch that carries the resourceVersion read.
func patchMetadata(ctx context.Context, c client.Client, obj client.Object, field, key string, value any) error {
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": obj.GetResourceVersion(),
		field:             map[string]any{key: value},
	}})
	if err != nil {
		return err
	}
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data))
}
