package ownership

import (
	"fmt"
	"slices"
	"strings"
	"time"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
)

// Registration is what an IntegrationOperator's status says about the
// operator that holds the id.
type Registration struct {
	Namespace string
	Leader    string
	Heartbeat time.Time
	// StaleAfter is how long the holder said its registration stays
	// valid without a heartbeat; zero when it did not say.
	StaleAfter time.Duration
}

// DefaultStaleAfter is how long a registration that does not say how long
// it stays valid (StaleAfter zero) counts as live without a heartbeat.
const DefaultStaleAfter = 30 * time.Second

// Bounds of an operator's heartbeat interval: its registration counts as
// gone after three missed renewals.
const (
	MinHeartbeatInterval = time.Second
	MaxHeartbeatInterval = 30 * time.Second
)

// ValidateHeartbeatInterval refuses an interval outside
// [MinHeartbeatInterval, MaxHeartbeatInterval].
func ValidateHeartbeatInterval(d time.Duration) error {
	if d < MinHeartbeatInterval || d > MaxHeartbeatInterval {
		return fmt.Errorf("--heartbeat-interval must be between %s and %s, got %s", MinHeartbeatInterval, MaxHeartbeatInterval, d)
	}
	return nil
}

// FromOperator reads the registration in an IntegrationOperator's status.
func FromOperator(iop *camelv1alpha1.IntegrationOperator) Registration {
	r := Registration{Namespace: iop.Status.Namespace, Leader: iop.Status.Leader,
		StaleAfter: time.Duration(iop.Status.StaleAfterSeconds) * time.Second}
	if iop.Status.HeartbeatTime != nil {
		r.Heartbeat = iop.Status.HeartbeatTime.Time
	}
	return r
}

// Live reports whether the registration's holder still renews it, by its
// own StaleAfter (or DefaultStaleAfter).
func (r Registration) Live(now time.Time) bool {
	stale := r.StaleAfter
	if stale <= 0 {
		stale = DefaultStaleAfter
	}
	return r.Alive(now, stale)
}

// Reasons for the outcome of a registration check.
const (
	ReasonRegistered     = "Registered"
	ReasonStaleTakenOver = "StaleRegistrationTakenOver"
	ReasonConflict       = "Conflict"
)

// Alive reports whether the registration's heartbeat is recent enough.
func (r Registration) Alive(now time.Time, staleAfter time.Duration) bool {
	return !r.Heartbeat.IsZero() && now.Sub(r.Heartbeat) <= staleAfter
}

// CheckClaim decides whether an operator running in namespace may claim
// the registration: when it is free, already its own, or held by an
// operator whose heartbeat stopped more than staleAfter ago. Otherwise the
// id is taken and the message says by whom.
func CheckClaim(r Registration, namespace string, now time.Time, staleAfter time.Duration) (ok bool, reason, message string) {
	if r.StaleAfter > 0 {
		// The holder's own promise wins over the claimer's setting.
		staleAfter = r.StaleAfter
	}
	switch {
	case r.Namespace == "" || r.Namespace == namespace:
		return true, ReasonRegistered, fmt.Sprintf("registered by the operator in namespace %s", namespace)
	case !r.Alive(now, staleAfter):
		return true, ReasonStaleTakenOver, fmt.Sprintf(
			"taken over by the operator in namespace %s: the operator in namespace %s stopped renewing its registration at %s",
			namespace, r.Namespace, r.Heartbeat.UTC().Format(time.RFC3339))
	default:
		return false, ReasonConflict, fmt.Sprintf(
			refusedPrefix+"this id is registered to the live operator in namespace %s (leader %s, heartbeat %s ago); give one of them another id",
			namespace, r.Namespace, r.Leader, now.Sub(r.Heartbeat).Round(time.Second))
	}
}

// refusedPrefix starts the message of a refusal, naming the refused
// operator's namespace.
const refusedPrefix = "the operator in namespace %s refuses to run: "

// RefusedNamespace returns the namespace of the operator that a refusal
// message (from CheckClaim) is about, or "".
func RefusedNamespace(message string) string {
	var ns string
	if _, err := fmt.Sscanf(message, "the operator in namespace %s refuses", &ns); err != nil {
		return ""
	}
	return ns
}

// Reasons a resource is an orphan: its operator cannot reconcile it.
const (
	ReasonNotRegistered       = "NotRegistered"
	ReasonHeartbeatStale      = "HeartbeatStale"
	ReasonNotServingNamespace = "NotServingNamespace"
)

// Orphaned decides whether a resource in namespace, assigned to operator
// id, is an orphan; iop is the operator's registration, nil when there
// is none. It returns the reason and a message a user can act on.
func Orphaned(id, namespace string, iop *camelv1alpha1.IntegrationOperator, now time.Time) (reason, message string) {
	if iop == nil {
		return ReasonNotRegistered, fmt.Sprintf(
			"operator %q is not registered (no IntegrationOperator named %s): install it, or assign this resource to a registered operator", id, id)
	}
	reg := FromOperator(iop)
	if !reg.Live(now) {
		last := "never"
		if !reg.Heartbeat.IsZero() {
			last = reg.Heartbeat.UTC().Format(time.RFC3339)
		}
		return ReasonHeartbeatStale, fmt.Sprintf(
			"operator %q has not renewed its registration since %s: it is not running, so nothing reconciles this resource", id, last)
	}
	if ns := iop.Spec.WatchNamespaces; len(ns) > 0 && !slices.Contains(ns, namespace) {
		return ReasonNotServingNamespace, fmt.Sprintf(
			"operator %q serves only the namespaces %s, not %s: assign this resource to an operator that serves it", id, strings.Join(ns, ", "), namespace)
	}
	return "", ""
}
