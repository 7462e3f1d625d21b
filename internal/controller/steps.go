package controller

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Reason is the reason of a status condition: CamelCase, one of the named reasons of a kind. Code
// tells reasons apart by name, never by spelling.
type Reason string

// Condition is the reason and message of a status condition that a step
// sets; the status computation gives it its type and status.
type Condition struct {
	Reason  Reason
	Message string
}

// Outcome is what the steps of one reconcile found, besides what each
// kind observes. The first step that sets any of it is the last to run.
type Outcome struct {
	// Waiting: a step waits for something other than the children it
	// applied (a platform, a kit, a Kamelet) to change.
	Waiting *Condition
	// Failure: a step found bad input, which nothing changes until the
	// user does.
	Failure *Condition
	// Quiet: a step found that this reconcile must write nothing (the
	// resource waits for its previous owner, was released, or goes with
	// its namespace).
	Quiet bool
	// Done: a step did all that this reconcile had to do (a build's
	// runner already has the attempt), and the steps after it have
	// nothing to add.
	Done bool
}

// Stopped tells whether a step set the outcome.
func (o *Outcome) Stopped() bool { return o.Waiting != nil || o.Failure != nil || o.Quiet || o.Done }

// Step is one step of a reconcile: it observes or changes one thing and
// records what it found in the scope s.
type Step[S any] func(ctx context.Context, s S) (reconcile.Result, error)

// RunSteps runs steps in order, and stops after the first one that
// returns an error or a requeue, or sets the outcome. The stop rule:
//   - an object refused because its namespace is being deleted ends the
//     reconcile quietly: the resource goes with the namespace;
//   - bad input (a Failure with no error and no requeue) ends in a
//     terminal error, which is not retried;
//   - an error or a requeue is returned as it is, also with a Failure
//     (a failure that asks for a requeue is retried then);
//   - a wait ends the reconcile: a watch brings the next one.
func RunSteps[S any](ctx context.Context, s S, o *Outcome, steps ...Step[S]) (reconcile.Result, error) {
	for _, step := range steps {
		res, err := step(ctx, s)
		if NamespaceEnding(err) {
			o.Quiet = true
			return reconcile.Result{}, nil
		}
		if err == nil && res.IsZero() && !o.Stopped() {
			continue
		}
		if o.Failure != nil && err == nil && res.IsZero() {
			err = reconcile.TerminalError(fmt.Errorf("%s: %s", o.Failure.Reason, o.Failure.Message))
		}
		return res, err
	}
	return reconcile.Result{}, nil
}

// Because is the Condition of reason with message, for a step's outcome.
func Because(reason Reason, message string) *Condition {
	return &Condition{Reason: reason, Message: message}
}
