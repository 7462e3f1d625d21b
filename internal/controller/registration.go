package controller

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// OperatorLive reports whether operator id's registration is renewed: it
// exists and its heartbeat is recent enough.
func OperatorLive(ctx context.Context, registrations client.Reader, id string, now time.Time) (bool, error) {
	iop := &camelv1alpha1.IntegrationOperator{}
	err := registrations.Get(ctx, client.ObjectKey{Name: id}, iop)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return ownership.FromOperator(iop).Live(now), nil
}
