// Package controller holds what Caravan's reconcilers share.
package controller

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// conflictRetry is how soon a reconcile that lost an optimistic-lock race
// runs again, by then on the newer version from the cache.
const conflictRetry = 250 * time.Millisecond

// RequeueOnConflict turns a write conflict (a status computed from a
// read that is already stale) into a quiet, quick retry; other results
// pass through.
func RequeueOnConflict(res reconcile.Result, err error) (reconcile.Result, error) {
	if err != nil && apierrors.IsConflict(err) {
		return reconcile.Result{RequeueAfter: conflictRetry}, nil
	}
	return res, err
}

// NamespaceEnding tells whether err is a refusal to create an object in a namespace being deleted.
// The resource that wanted it goes with the namespace, and nothing about it is worth a retry or a
// status write.
func NamespaceEnding(err error) bool {
	return apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}
