package buildcontroller

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/image"
)

func TestComputeStatus(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	started, finished := now.Add(-time.Minute), now.Add(-time.Second)
	done := func(attempt int32, err error) *build.Status {
		return &build.Status{State: build.Done, Attempt: attempt, Started: started, Finished: finished,
			Result: build.Output{Result: image.Result{Image: "registry/kit@sha256:d", Digest: "sha256:d"},
				Artifacts: []camelv1.Artifact{{ID: "org.example:a:jar:1", Target: "/deployments/dependencies/org.example.a-1.jar"}}}, Err: err}
	}
	cases := []struct {
		name     string
		scope    scope
		phase    camelv1.BuildPhase
		reason   controller.Reason
		progress string // the condition that holds besides Ready, "" for none
		attempt  int32  // the failed attempts recorded
		image    string
	}{
		{name: "a build without a kit spec is in Error and stalled",
			scope: scope{Outcome: controller.Outcome{Failure: controller.Because(ReasonInvalidBuild, `the build has no "caravan" task`)}},
			phase: camelv1.BuildPhaseError, reason: ReasonInvalidBuild, progress: camelv1.ConditionStalled},
		{name: "a build that waits for the platform is Scheduling",
			scope: scope{Outcome: controller.Outcome{Waiting: controller.Because(ReasonPlatformNotReady, "waiting")}},
			phase: camelv1.BuildPhaseScheduling, reason: ReasonPlatformNotReady, progress: camelv1.ConditionReconciling},
		{name: "an attempt that waits for a build slot is Pending",
			scope: scope{job: &build.Status{State: build.Queued, Attempt: 1}},
			phase: camelv1.BuildPhasePending, reason: ReasonQueued, progress: camelv1.ConditionReconciling},
		{name: "an attempt that runs makes the build Running",
			scope: scope{job: &build.Status{State: build.Running, Attempt: 1, Started: started}},
			phase: camelv1.BuildPhaseRunning, reason: ReasonRunning, progress: camelv1.ConditionReconciling},
		{name: "an attempt that succeeded makes the build Succeeded with its image and artifacts",
			scope: scope{job: done(1, nil)},
			phase: camelv1.BuildPhaseSucceeded, reason: ReasonSucceeded, image: "registry/kit@sha256:d"},
		{name: "an attempt that failed with attempts left makes the build Failed, to be retried",
			scope: scope{job: done(1, fmt.Errorf("pushing: %w", &image.Error{Reason: image.ReasonRegistryUnreachable, Registry: "registry:5000", Err: errors.New("connection refused")}))},
			phase: camelv1.BuildPhaseFailed, reason: image.ReasonRegistryUnreachable, progress: camelv1.ConditionReconciling, attempt: 1},
		{name: "the last attempt that failed puts the build in Error",
			scope: scope{job: done(build.MaxAttempts, errors.New("no space left"))},
			phase: camelv1.BuildPhaseError, reason: ReasonBuildFailed, progress: camelv1.ConditionStalled, attempt: build.MaxAttempts},
		{name: "a cancelled attempt puts the build in Error",
			scope: scope{job: done(1, context.Canceled)},
			phase: camelv1.BuildPhaseError, reason: ReasonBuildFailed, progress: camelv1.ConditionStalled, attempt: 1},
		{name: "a reconcile that observed nothing leaves the status as it was",
			phase: camelv1.BuildPhaseRunning, reason: ReasonRunning, progress: camelv1.ConditionReconciling},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := &camelv1.Build{ObjectMeta: metav1.ObjectMeta{Name: "kit", Generation: 1}}
			// As a previous reconcile left it, while the first attempt ran.
			setPhase(b, camelv1.BuildPhaseRunning, metav1.ConditionFalse, ReasonRunning, "attempt 1 is running")
			s := tc.scope
			s.b, s.now = b, now
			computeStatus(&s)
			st := b.Status
			if st.Phase != tc.phase {
				t.Errorf("phase %q, want %q", st.Phase, tc.phase)
			}
			ready := meta.FindStatusCondition(st.Conditions, camelv1.ConditionReady)
			if ready == nil || controller.Reason(ready.Reason) != tc.reason {
				t.Errorf("Ready %+v, want reason %s", ready, tc.reason)
			}
			for _, c := range []string{camelv1.ConditionReconciling, camelv1.ConditionStalled} {
				if held := meta.IsStatusConditionTrue(st.Conditions, c); held != (c == tc.progress) {
					t.Errorf("%s is %v", c, held)
				}
			}
			if attempts(b) != tc.attempt {
				t.Errorf("%d failed attempts recorded, want %d", attempts(b), tc.attempt)
			}
			if st.Failure != nil && !st.Failure.Time.Time.Equal(now) {
				t.Errorf("failure recorded at %v, want %v", st.Failure.Time, now)
			}
			if st.Image != tc.image {
				t.Errorf("image %q, want %q", st.Image, tc.image)
			}
			if hasArtifacts := len(st.Artifacts) == 1; hasArtifacts != (tc.image != "") {
				t.Errorf("artifacts %+v recorded with image %q", st.Artifacts, st.Image)
			}
		})
	}
}
