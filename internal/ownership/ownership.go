// Package ownership holds the rules that decide which operator owns a
// resource: operator ids, the camel.apache.org/operator.id annotation and
// its label mirror, and adoption by the default operator.
package ownership

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// DefaultID is the operator id used when none is configured.
const DefaultID = "camel-k"

// Environment variables that carry the operator id, in order of precedence
// after the --operator-id flag.
const (
	EnvOperatorID      = "OPERATOR_ID"
	EnvKamelOperatorID = "KAMEL_OPERATOR_ID"
)

// ValidateID checks that id can name an operator: it is a label value, an
// object name and part of derived names, so it must be a DNS-1123 label.
func ValidateID(id string) error {
	if id == "" {
		return fmt.Errorf("the operator id is empty: it must be a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters)")
	}
	if errs := validation.IsDNS1123Label(id); len(errs) > 0 {
		return fmt.Errorf("invalid operator id %q: it must be a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters): %s",
			id, strings.Join(errs, "; "))
	}
	return nil
}

// ResolveID picks the operator id from the flag, then OPERATOR_ID, then
// KAMEL_OPERATOR_ID, then DefaultID, and validates it. It also returns
// where the id came from, for logs and errors.
func ResolveID(flag string, getenv func(string) string) (id, source string, err error) {
	switch {
	case flag != "":
		id, source = flag, "--operator-id"
	case getenv(EnvOperatorID) != "":
		id, source = getenv(EnvOperatorID), EnvOperatorID
	case getenv(EnvKamelOperatorID) != "":
		id, source = getenv(EnvKamelOperatorID), EnvKamelOperatorID
	default:
		id, source = DefaultID, "default"
	}
	if err := ValidateID(id); err != nil {
		return "", source, fmt.Errorf("%s: %w", source, err)
	}
	return id, source, nil
}

// AssignedID returns the operator id a resource is assigned to by its
// annotation, or "" when it names none. An empty annotation names none.
func AssignedID(annotations map[string]string) string {
	return annotations[camelv1.OperatorIDAnnotation]
}

// Action is what an operator does with a resource it sees.
type Action int

const (
	// Ignore: the resource belongs to another operator, or to none and this
	// operator is not the default one.
	Ignore Action = iota
	// Reconcile: the resource is this operator's and its label agrees.
	Reconcile
	// MirrorLabel: the annotation names this operator but the label, which
	// the server-side watches select on, is missing or names another.
	MirrorLabel
	// Adopt: the resource names no operator and this is the default one; it
	// stamps its id on the annotation and the label.
	Adopt
)

func (a Action) String() string {
	return [...]string{"Ignore", "Reconcile", "MirrorLabel", "Adopt"}[a]
}

// Decide says what the operator self does with a resource that has the
// given annotations and labels. isDefault tells whether self is the
// default operator, the one that adopts unassigned resources.
func Decide(annotations, labels map[string]string, self string, isDefault bool) Action {
	assigned := AssignedID(annotations)
	switch {
	case assigned == "" && isDefault:
		return Adopt
	case assigned != self:
		return Ignore
	case labels[camelv1.OperatorIDLabel] != self:
		return MirrorLabel
	default:
		return Reconcile
	}
}

// Owns reports whether the resource is self's to reconcile now: assigned
// to self by its annotation. Every reconcile checks it on the object it
// read, because a resource can move between the event and the read.
func Owns(annotations map[string]string, self string) bool {
	return AssignedID(annotations) == self
}
