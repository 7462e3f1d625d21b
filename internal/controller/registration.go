package controller

import (
	"context"
	"time"

	"golang.org/x/sync/singleflight"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
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

// registrationsRemembered is how many operators' registrations
// RecentRegistrations keeps, and registrationTTL for how long it serves
// one again. A registration goes stale after three missed heartbeats (at
// least three seconds), so an answer a second old tells liveness as well
// as a watch would.
const (
	registrationsRemembered = 256
	registrationTTL         = time.Second
)

// RecentRegistrations reads IntegrationOperators from the API server and
// serves each answer, found or not, again for a second; concurrent reads
// of one registration make one request. It is how an operator reads
// other operators' registrations without watching them: a handover asks
// whether the previous owner is live, and a burst of moves from one
// operator asks it for each integration at once. A watch of every
// registration in every operator would bring each one every other
// operator's heartbeat: M² events for M operators. Reads of other kinds,
// and lists, go to the API server.
type RecentRegistrations struct {
	api    client.Reader
	recent *utilcache.LRUExpireCache
	// reads makes concurrent reads of one registration a single request.
	reads singleflight.Group
}

// NewRecentRegistrations reads registrations through api.
func NewRecentRegistrations(api client.Reader) *RecentRegistrations {
	return &RecentRegistrations{api: api, recent: utilcache.NewLRUExpireCache(registrationsRemembered)}
}

// registrationAnswer is a remembered read: the registration, or nil when
// it did not exist.
type registrationAnswer struct {
	iop *camelv1alpha1.IntegrationOperator
}

// Get reads obj, an IntegrationOperator from the last second's answers
// when it has one.
func (r *RecentRegistrations) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	out, ok := obj.(*camelv1alpha1.IntegrationOperator)
	if !ok || len(opts) > 0 {
		return r.api.Get(ctx, key, obj, opts...)
	}
	v, err, _ := r.reads.Do(key.Name, func() (any, error) {
		if v, found := r.recent.Get(key.Name); found {
			return v, nil
		}
		got := &camelv1alpha1.IntegrationOperator{}
		err := r.api.Get(ctx, key, got)
		switch {
		case apierrors.IsNotFound(err):
			got = nil
		case err != nil:
			return nil, err
		}
		a := registrationAnswer{iop: got}
		r.recent.Add(key.Name, a, registrationTTL)
		return a, nil
	})
	if err != nil {
		return err
	}
	return answer(v.(registrationAnswer), key.Name, out)
}

// answer copies a remembered registration into out, or says it is not
// found.
func answer(a registrationAnswer, name string, out *camelv1alpha1.IntegrationOperator) error {
	if a.iop == nil {
		return apierrors.NewNotFound(camelv1alpha1.GroupVersion.WithResource("integrationoperators").GroupResource(), name)
	}
	a.iop.DeepCopyInto(out)
	return nil
}

// List lists from the API server.
func (r *RecentRegistrations) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return r.api.List(ctx, list, opts...)
}
