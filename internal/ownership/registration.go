package ownership

import (
	"fmt"
	"time"
)

// Registration is what an IntegrationOperator's status says about the
// operator that holds the id.
type Registration struct {
	Namespace string
	Leader    string
	Heartbeat time.Time
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
