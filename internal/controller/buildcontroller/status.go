package buildcontroller

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/image"
)

// computeStatus derives the build's phase and conditions from what the steps observed.
// A reconcile that observed nothing new (a backoff, a transient error) leaves the status as it was.
func computeStatus(s *scope) {
	b := s.b
	switch {
	case s.Failure != nil:
		fail(b, s.Failure.Reason, s.Failure.Message, true, s.now)
	case s.Waiting != nil:
		setPhase(b, camelv1.BuildPhaseScheduling, metav1.ConditionFalse, s.Waiting.Reason, s.Waiting.Message)
	case s.job != nil:
		fromJob(b, *s.job, s.now)
	}
}

// fromJob records what the runner says of the current attempt.
func fromJob(b *camelv1.Build, st build.Status, now time.Time) {
	switch st.State {
	case build.Queued:
		setPhase(b, camelv1.BuildPhasePending, metav1.ConditionFalse, ReasonQueued,
			fmt.Sprintf("attempt %d waits for a free build slot", st.Attempt))
	case build.Running:
		b.Status.StartedAt = &metav1.Time{Time: st.Started}
		msg := fmt.Sprintf("attempt %d is running", st.Attempt)
		if st.Waiting != "" {
			msg += ": " + st.Waiting
		}
		setPhase(b, camelv1.BuildPhaseRunning, metav1.ConditionFalse, ReasonRunning, msg)
	case build.Done:
		b.Status.StartedAt = &metav1.Time{Time: st.Started}
		b.Status.Duration = st.Finished.Sub(st.Started).Round(time.Millisecond).String()
		if st.Err == nil {
			b.Status.Image, b.Status.Digest, b.Status.BaseImage = st.Result.Image, st.Result.Digest, st.Result.BaseImage
			b.Status.Artifacts = st.Result.Artifacts
			if a := st.Result.Archive; a != nil {
				b.Status.SetCondition(a.Condition(b.Generation))
			}
			setPhase(b, camelv1.BuildPhaseSucceeded, metav1.ConditionTrue, ReasonSucceeded, st.Result.Summary())
			return
		}
		reason := controller.Reason(image.ReasonOf(st.Err))
		if build.IsFailure(st.Err) {
			reason = ReasonDependencyUnresolved
		}
		fail(b, reason, st.Err.Error(), FinalFailure(st), now)
		b.Status.Failure.Recovery.Attempt = int(st.Attempt)
		b.Status.Failure.Recovery.AttemptTime = metav1.Time{Time: st.Finished}
	}
}

// fail records a failure at now; a final one puts the build in Error, another in Failed, to be retried.
func fail(b *camelv1.Build, reason controller.Reason, message string, final bool, now time.Time) {
	if reason == "" {
		reason = ReasonBuildFailed
	}
	if b.Status.Failure == nil {
		b.Status.Failure = &camelv1.Failure{}
	}
	b.Status.Failure.Reason = message
	b.Status.Failure.Time = metav1.Time{Time: now}
	b.Status.Failure.Recovery.AttemptMax = build.MaxAttempts
	if final {
		// In Error the build is Stuck: Stalled, with this reason.
		setPhase(b, camelv1.BuildPhaseError, metav1.ConditionFalse, reason, message)
		return
	}
	setPhase(b, camelv1.BuildPhaseFailed, metav1.ConditionFalse, reason,
		fmt.Sprintf("%s; retrying (attempt %d of %d failed)", message, attempts(b)+1, build.MaxAttempts))
}

// setPhase sets the build's phase, and Ready with Reconciling or Stalled as the phase tells.
func setPhase(b *camelv1.Build, phase camelv1.BuildPhase, ready metav1.ConditionStatus, reason controller.Reason, message string) {
	b.Status.Phase = phase
	b.Status.ObservedGeneration = b.Generation
	// Scheduling, queued, running, or failed and to be retried: in progress.
	progress := controller.ProgressOf(phase, camelv1.BuildPhaseSucceeded, camelv1.BuildPhaseError)
	controller.SetProgress(&b.Status.Conditions, b.Generation, ready, progress, reason, message)
}

// attempts is the number of attempts that ended in failure.
func attempts(b *camelv1.Build) int32 {
	if b.Status.Failure == nil {
		return 0
	}
	return int32(b.Status.Failure.Recovery.Attempt)
}

// attemptOf is the attempt whose outcome the status records.
func attemptOf(b *camelv1.Build) int32 {
	if b.Status.Failure != nil && b.Status.Phase != camelv1.BuildPhaseSucceeded {
		return int32(b.Status.Failure.Recovery.Attempt)
	}
	return attempts(b) + 1
}
