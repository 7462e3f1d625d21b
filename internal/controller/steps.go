package controller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// Reason is the reason of a status condition: CamelCase, one of the named
// reasons of a kind, so that code tells reasons apart by name and never
// by spelling.
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

// PatchStatus writes the status of after when it differs from the one
// before had (oldStatus, newStatus), with a precondition on the
// resourceVersion read, so that a status computed from a stale read never
// overwrites a newer one. It reports whether it wrote.
func PatchStatus(ctx context.Context, c client.Client, before, after client.Object, oldStatus, newStatus any) (bool, error) {
	if equality.Semantic.DeepEqual(oldStatus, newStatus) {
		return false, nil
	}
	patch := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
	if err := c.Status().Patch(ctx, after, patch); err != nil {
		return false, fmt.Errorf("patching status: %w", err)
	}
	return true, nil
}

// Cond is a condition of the given status, reason and message; its type
// is set by SetProgress.
func Cond(status metav1.ConditionStatus, reason Reason, message string) metav1.Condition {
	return metav1.Condition{Status: status, Reason: string(reason), Message: message}
}

// Progress is where a resource stands, as kstatus reads it.
type Progress int

const (
	// Current: done, or as done as it gets; neither Reconciling nor Stalled.
	Current Progress = iota
	// InProgress: on its way; Reconciling.
	InProgress
	// Stuck: it cannot get there without a change; Stalled.
	Stuck
)

// ProgressOf is the progress of a resource in phase: Current in its done
// phase, Stuck in its stuck one, else InProgress.
func ProgressOf[P comparable](phase, done, stuck P) Progress {
	switch phase {
	case done:
		return Current
	case stuck:
		return Stuck
	}
	return InProgress
}

// SetProgress sets Ready with status, reason and message and, by
// progress, Reconciling or Stalled with the same reason and message.
func SetProgress(conditions *[]metav1.Condition, gen int64, status metav1.ConditionStatus, progress Progress, reason Reason, message string) {
	SetProgressOf(conditions, camelv1.ConditionReady, gen, status, progress, reason, message)
}

// SetProgressOf is SetProgress with summary, the condition of a writer
// that leaves Ready to another (the fleet controller's Deployed on an
// IntegrationOperator, whose Ready is the operator's), in place of Ready.
// The conditions are observed at generation gen; Reconciling and Stalled
// are set only while they hold, as kstatus reads them.
func SetProgressOf(conditions *[]metav1.Condition, summary string, gen int64, status metav1.ConditionStatus, progress Progress, reason Reason, message string) {
	held := Cond(metav1.ConditionTrue, reason, message)
	var reconciling, stalled *metav1.Condition
	switch progress {
	case InProgress:
		reconciling = &held
	case Stuck:
		stalled = &held
	}
	set := func(t string, c *metav1.Condition) {
		if c == nil {
			meta.RemoveStatusCondition(conditions, t)
			return
		}
		c.Type, c.ObservedGeneration = t, gen
		meta.SetStatusCondition(conditions, *c)
	}
	summarised := Cond(status, reason, message)
	set(summary, &summarised)
	set(camelv1.ConditionReconciling, reconciling)
	set(camelv1.ConditionStalled, stalled)
}

// Because is the Condition of reason with message, for a step's outcome.
func Because(reason Reason, message string) *Condition {
	return &Condition{Reason: reason, Message: message}
}
