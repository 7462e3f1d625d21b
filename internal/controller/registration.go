package controller

import (
	"context"
	"time"

	"golang.org/x/sync/singleflight"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// Liveness tells whether operator id can act on a resource of namespace:
// it is registered, its heartbeat is recent enough, and it serves the
// namespace. An operator that cannot will never release the resource nor
// hand its label over, so whoever it was assigned to next goes ahead
// without it.
type Liveness interface {
	Serves(ctx context.Context, id, namespace string) (bool, error)
}

// OperatorServes reports whether operator id, as its registration read
// from registrations says, can act on a resource of namespace at now.
func OperatorServes(ctx context.Context, registrations client.Reader, id, namespace string, now time.Time) (bool, error) {
	iop := &camelv1alpha1.IntegrationOperator{}
	err := registrations.Get(ctx, client.ObjectKey{Name: id}, iop)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return servesAt(iop, id, namespace, now), nil
}

// servesAt judges a registration, nil when there is none, at when.
func servesAt(iop *camelv1alpha1.IntegrationOperator, id, namespace string, when time.Time) bool {
	reason, _ := ownership.Orphaned(id, namespace, iop, when)
	return reason == ""
}

// WatchedRegistrations is the Liveness of registrations a cache watches,
// judged at the time of the question.
type WatchedRegistrations struct {
	Reader client.Reader
	Clock  clock.PassiveClock
}

// Serves judges operator id's registration in the cache now.
func (w WatchedRegistrations) Serves(ctx context.Context, id, namespace string) (bool, error) {
	return OperatorServes(ctx, w.Reader, id, namespace, w.Clock.Now())
}

// registrationsRemembered is how many operators' registrations
// RecentRegistrations keeps, and registrationTTL for how long it serves
// one again.
const (
	registrationsRemembered = 256
	registrationTTL         = time.Second
)

// RecentRegistrations is the Liveness of registrations read from the API server, each answer kept
// for a second. An answer, found or not, serves again for a second, and concurrent reads of one
// registration make one request. It is how an operator judges other operators without watching
// their registrations: a handover asks whether the previous owner is live, and a burst of moves
// from one operator asks it for each integration at once. A watch of every registration in every
// operator would bring each one every other operator's heartbeat: M² events for M operators.
//
// A remembered registration is judged at the time it was read, not at the time of the question: the
// operator may have renewed it since, so it counts as gone only if it was gone when read. A
// takeover comes at most a second later than a watch would allow it, never earlier.
type RecentRegistrations struct {
	api    client.Reader
	clock  clock.PassiveClock
	recent *utilcache.LRUExpireCache
	// reads makes concurrent reads of one registration a single request.
	reads singleflight.Group
}

// NewRecentRegistrations reads registrations through api.
func NewRecentRegistrations(api client.Reader, clk clock.PassiveClock) *RecentRegistrations {
	return &RecentRegistrations{api: api, clock: clk, recent: utilcache.NewLRUExpireCache(registrationsRemembered)}
}

// registrationRead is a remembered read: the registration, nil when it
// did not exist, and when it was read.
type registrationRead struct {
	iop *camelv1alpha1.IntegrationOperator
	at  time.Time
}

// Serves judges operator id's registration as read in the last second, or
// as read now.
func (r *RecentRegistrations) Serves(ctx context.Context, id, namespace string) (bool, error) {
	read, err := r.read(ctx, id)
	if err != nil {
		return false, err
	}
	return servesAt(read.iop, id, namespace, read.at), nil
}

// Read returns a copy of operator id's registration (nil when it has none)
// and when it was read: in the last second, or now.
func (r *RecentRegistrations) Read(ctx context.Context, id string) (*camelv1alpha1.IntegrationOperator, time.Time, error) {
	read, err := r.read(ctx, id)
	if err != nil {
		return nil, time.Time{}, err
	}
	return read.iop.DeepCopy(), read.at, nil
}

// read returns the remembered read of operator id's registration, shared
// with every other caller, or reads it.
func (r *RecentRegistrations) read(ctx context.Context, id string) (registrationRead, error) {
	v, err, _ := r.reads.Do(id, func() (any, error) {
		if v, found := r.recent.Get(id); found {
			return v, nil
		}
		at := r.clock.Now()
		iop := &camelv1alpha1.IntegrationOperator{}
		err := r.api.Get(ctx, client.ObjectKey{Name: id}, iop)
		switch {
		case apierrors.IsNotFound(err):
			iop = nil
		case err != nil:
			return nil, err
		}
		read := registrationRead{iop: iop, at: at}
		r.recent.Add(id, read, registrationTTL)
		return read, nil
	})
	if err != nil {
		return registrationRead{}, err
	}
	return v.(registrationRead), nil
}
