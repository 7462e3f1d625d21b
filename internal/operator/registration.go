package operator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/metrics"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// errRegistrationLost stops the operator when another operator took its
// id over (it found this one's heartbeat stale). A restarted operator
// then finds the conflict and refuses to run.
var errRegistrationLost = errors.New("registration lost")

// errRegistrationExpired stops an operator that could not renew its registration for as long as it
// lasts. Another operator may have taken its resources over, and its caches may still show them as
// its own. It starts again from a fresh read.
var errRegistrationExpired = errors.New("registration expired")

// Registrar claims the IntegrationOperator named by the operator id and
// renews its heartbeat. The operator's controllers start only once the
// claim succeeds; while another live operator holds the id, the registrar
// reports the conflict (log, Event, Conflict condition, failing readiness)
// and keeps checking, taking the id over if that operator stops.
type Registrar struct {
	// Client reads and writes IntegrationOperators without a cache, so
	// that a claim always starts from the server's latest version.
	Client    client.Client
	ID        string
	Namespace string
	Version   string
	// Default is the spec.default of a registration this operator creates.
	Default bool
	// WatchNamespaces are the namespaces the operator serves, empty for all. The operator
	// keeps them in the spec of a registration it creates (under OLM) or that asks for them
	// (WatchNamespacesFromAnnotation, from kustomize).
	WatchNamespaces []string
	// Identity names this replica; it is the leader election identity.
	Identity   string
	Interval   time.Duration
	StaleAfter time.Duration
	Clock      clock.Clock
	Recorder   events.EventRecorder
	// Rights, when set, says what rights the operator lacks: the
	// registration is then not Ready.
	Rights interface{ Missing() string }
	// OnRegistered runs once, after the first successful claim.
	OnRegistered func(ctx context.Context) error
	// Metrics, when set, records each renewal that lands.
	Metrics *metrics.Metrics

	mu         sync.Mutex
	registered bool
	refusal    string
	isDefault  bool
	// renewedAt is the heartbeat time of the last renewal that landed;
	// running is set once the controllers run.
	renewedAt time.Time
	running   bool
}

// NeedLeaderElection makes only the elected replica register.
func (r *Registrar) NeedLeaderElection() bool { return true }

// Start claims and renews the registration until ctx ends.
func (r *Registrar) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithValues("operatorID", r.ID)
	started := false
	for {
		claimed, err := r.beat(ctx)
		switch {
		case errors.Is(err, errRegistrationExpired):
			log.Error(err, "Stopping: the registration expired, and another operator may have taken this one's resources over")
			return err
		case err != nil:
			log.Error(err, "Renewing the registration failed")
		case claimed && !started:
			log.Info("Registered; starting controllers")
			r.mu.Lock()
			r.running = true
			r.mu.Unlock()
			if err := r.OnRegistered(ctx); err != nil {
				return fmt.Errorf("starting controllers: %w", err)
			}
			started = true
		case !claimed && started:
			return fmt.Errorf("%w: %s", errRegistrationLost, r.Refusal())
		}
		select {
		case <-ctx.Done():
			r.releaseConflict(context.WithoutCancel(ctx))
			return nil
		case <-r.Clock.After(r.Interval):
		}
	}
}

// beat runs one claim-or-renew round and reports whether this operator
// holds the registration afterwards. A write that conflicts with another
// one (the fleet controller's roll-out conditions, the rights check, an
// operator racing for a free id) is read and judged again: only a live
// holder of the id makes this operator lose it.
func (r *Registrar) beat(ctx context.Context) (bool, error) {
	claimed := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var err error
		claimed, err = r.beatOnce(ctx)
		return err
	})
	if apierrors.IsConflict(err) {
		return false, fmt.Errorf("renewing registration: still conflicting after retries: %w", err)
	}
	return claimed, err
}

// beatOnce is one try of beat: it returns the conflict of its write as
// an error, for beat to try again.
func (r *Registrar) beatOnce(ctx context.Context) (bool, error) {
	iop, err := r.getOrCreate(ctx)
	if err != nil {
		return false, err
	}
	now := r.Clock.Now()
	if err := r.checkNotExpired(now); err != nil {
		return false, err
	}
	ok, reason, message := ownership.CheckClaim(ownership.FromOperator(iop), r.Namespace, now, r.StaleAfter)
	if !ok {
		return false, r.refuse(ctx, iop, message)
	}
	if reason == ownership.ReasonStaleTakenOver {
		controller.Event(r.Recorder, iop, nil, corev1.EventTypeWarning, reason, "Register", message)
	}
	if iop.Annotations[camelv1alpha1.WatchNamespacesFromAnnotation] == camelv1alpha1.WatchNamespacesFromOperator &&
		!slices.Equal(iop.Spec.WatchNamespaces, r.WatchNamespaces) {
		// Declares what the operator serves, so that diagnostics and upgrades read it.
		iop.Spec.WatchNamespaces = slices.Clone(r.WatchNamespaces)
		if err := r.Client.Update(ctx, iop); err != nil {
			if apierrors.IsConflict(err) {
				return false, err
			}
			return false, fmt.Errorf("declaring the watched namespaces in the registration: %w", err)
		}
	}
	iop.Status.Namespace = r.Namespace
	iop.Status.Version = r.Version
	iop.Status.Leader = r.Identity
	iop.Status.HeartbeatTime = &metav1.Time{Time: now}
	iop.Status.StaleAfterSeconds = int32(r.StaleAfter / time.Second)
	iop.Status.ObservedGeneration = iop.Generation
	ready := metav1.Condition{Type: camelv1.ConditionReady, Status: metav1.ConditionTrue, Reason: reason, Message: message,
		ObservedGeneration: iop.Generation}
	if r.Rights != nil {
		if missing := r.Rights.Missing(); missing != "" {
			ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, reasonMissingRights, missing
		}
	}
	meta.SetStatusCondition(&iop.Status.Conditions, ready)
	if c := meta.FindStatusCondition(iop.Status.Conditions, camelv1alpha1.ConditionConflict); c != nil &&
		ownership.RefusedNamespace(c.Message) == r.Namespace {
		// This operator was refused before and now holds the id.
		meta.RemoveStatusCondition(&iop.Status.Conditions, camelv1alpha1.ConditionConflict)
	}
	// An update (not a patch) carries the resourceVersion read above, so
	// two operators racing for a free id cannot both win: the loser reads
	// the winner's heartbeat when it tries again.
	if err := r.Client.Status().Update(ctx, iop); err != nil {
		if apierrors.IsConflict(err) {
			return false, err
		}
		return false, fmt.Errorf("renewing registration: %w", err)
	}
	r.setState(true, "", iop.Spec.Default)
	r.mu.Lock()
	r.renewedAt = now
	r.mu.Unlock()
	if r.Metrics != nil {
		r.Metrics.Renewed(now, r.StaleAfter)
	}
	return true, nil
}

// checkNotExpired refuses to renew, at now, a registration that a running
// operator let expire: the operator must stop instead (errRegistrationExpired).
func (r *Registrar) checkNotExpired(now time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.running || now.Sub(r.renewedAt) < r.StaleAfter {
		return nil
	}
	return fmt.Errorf("%w: operator %s could not renew it for %s (it counts as gone after %s)",
		errRegistrationExpired, r.ID, now.Sub(r.renewedAt).Round(time.Second), r.StaleAfter)
}

// WriteDeadline is the time until which the operator's writes may go, or errNotLive when it is not
// registered or past it. It is its last renewal's heartbeat time plus the registration's life, less
// one heartbeat interval of margin (for the time a write takes, and the clocks of the nodes). Other
// operators count it as gone only after the registration's whole life.
func (r *Registrar) WriteDeadline() (time.Time, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.registered {
		return time.Time{}, fmt.Errorf("%w: operator %s does not hold its registration", errNotLive, r.ID)
	}
	margin := r.Interval
	if margin <= 0 || margin >= r.StaleAfter {
		margin = r.StaleAfter / 2
	}
	until := r.renewedAt.Add(r.StaleAfter - margin)
	if now := r.Clock.Now(); !now.Before(until) {
		return time.Time{}, fmt.Errorf("%w: operator %s last renewed it %s ago; its writes wait for the next renewal",
			errNotLive, r.ID, now.Sub(r.renewedAt).Round(time.Second))
	}
	return until, nil
}

func (r *Registrar) getOrCreate(ctx context.Context) (*camelv1alpha1.IntegrationOperator, error) {
	iop := &camelv1alpha1.IntegrationOperator{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: r.ID}, iop)
	if err == nil {
		return iop, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading registration: %w", err)
	}
	iop = &camelv1alpha1.IntegrationOperator{
		ObjectMeta: metav1.ObjectMeta{Name: r.ID, Annotations: map[string]string{
			camelv1alpha1.WatchNamespacesFromAnnotation: camelv1alpha1.WatchNamespacesFromOperator}},
		Spec: camelv1alpha1.IntegrationOperatorSpec{Default: r.Default, WatchNamespaces: slices.Clone(r.WatchNamespaces)},
	}
	if err := r.Client.Create(ctx, iop); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating registration: %w", err)
	}
	// Read it back: a concurrent creator may have won.
	if err := r.Client.Get(ctx, client.ObjectKey{Name: r.ID}, iop); err != nil {
		return nil, fmt.Errorf("reading registration: %w", err)
	}
	return iop, nil
}

// refuse records that another live operator holds the id. The Conflict
// condition and the Event are written once per refusal, not at every beat.
func (r *Registrar) refuse(ctx context.Context, iop *camelv1alpha1.IntegrationOperator, message string) error {
	first := r.Refusal() != message
	r.setState(false, message, false)
	if !first {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("Refusing to reconcile: operator id already registered", "operatorID", r.ID, "reason", message)
	controller.Event(r.Recorder, iop, nil, corev1.EventTypeWarning, ownership.ReasonConflict, "Register", message)
	meta.SetStatusCondition(&iop.Status.Conditions, metav1.Condition{
		Type: camelv1alpha1.ConditionConflict, Status: metav1.ConditionTrue,
		Reason: ownership.ReasonConflict, Message: message, ObservedGeneration: iop.Generation,
	})
	if err := r.Client.Status().Update(ctx, iop); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("reporting the conflict: %w", err)
	}
	return nil
}

// releaseConflict clears this operator's Conflict condition when it stops,
// so the registration no longer reports a refused operator.
func (r *Registrar) releaseConflict(ctx context.Context) {
	if r.Refusal() == "" {
		return
	}
	iop := &camelv1alpha1.IntegrationOperator{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: r.ID}, iop); err != nil {
		return
	}
	if c := meta.FindStatusCondition(iop.Status.Conditions, camelv1alpha1.ConditionConflict); c == nil || c.Message != r.Refusal() {
		return
	}
	meta.RemoveStatusCondition(&iop.Status.Conditions, camelv1alpha1.ConditionConflict)
	_ = r.Client.Status().Update(ctx, iop)
}

func (r *Registrar) setState(registered bool, refusal string, isDefault bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.registered, r.refusal, r.isDefault = registered, refusal, isDefault
}

// Registered reports whether this operator holds its registration.
func (r *Registrar) Registered() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.registered
}

// IsDefault reports whether this operator is registered as the default
// one, which adopts unassigned resources.
func (r *Registrar) IsDefault() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.registered && r.isDefault
}

// Refusal is why the operator does not run, or "".
func (r *Registrar) Refusal() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refusal
}

// ReadyCheck fails while the operator is refused, and until a live operator registers its id to its
// namespace. That operator is this replica once it leads, or the leader a standby replica waits
// behind.
func (r *Registrar) ReadyCheck(req *http.Request) error {
	if refusal := r.Refusal(); refusal != "" {
		return errors.New(refusal)
	}
	if r.Registered() {
		return nil
	}
	iop := &camelv1alpha1.IntegrationOperator{}
	if err := r.Client.Get(req.Context(), client.ObjectKey{Name: r.ID}, iop); err != nil {
		return fmt.Errorf("operator %s is not registered yet: %w", r.ID, err)
	}
	reg := ownership.FromOperator(iop)
	if reg.Namespace != r.Namespace || !reg.Live(r.Clock.Now()) {
		return fmt.Errorf("operator %s is not registered to namespace %s yet", r.ID, r.Namespace)
	}
	return nil
}
