package controller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// PatchStatus writes the status of after when it differs from before's, and reports whether it
// wrote. oldStatus and newStatus are the two statuses. The patch has a precondition on the
// resourceVersion read, so that a status computed from a stale read never overwrites a newer one.
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

// SetProgressOf is SetProgress with summary in place of Ready, for a writer that leaves Ready to
// another. The fleet controller's Deployed on an IntegrationOperator is one: Ready is the
// operator's. The conditions are observed at generation gen; Reconciling and Stalled are set only
// while they hold, as kstatus reads them.
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
