package controller

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// OperatorServes reports whether operator id can act on a resource of
// namespace: it is registered, its heartbeat is recent enough, and it
// serves the namespace. An operator that cannot will never release the
// resource nor hand its label over, so whoever it was assigned to next
// goes ahead without it.
func OperatorServes(ctx context.Context, registrations client.Reader, id, namespace string, now time.Time) (bool, error) {
	iop := &camelv1alpha1.IntegrationOperator{}
	err := registrations.Get(ctx, client.ObjectKey{Name: id}, iop)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	reason, _ := ownership.Orphaned(id, namespace, iop, now)
	return reason == "", nil
}
