package integrationkitcontroller

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/kit"
)

func TestComputeStatus(t *testing.T) {
	buildIn := func(phase camelv1.BuildPhase, status metav1.ConditionStatus, reason, message string) *camelv1.Build {
		b := &camelv1.Build{ObjectMeta: metav1.ObjectMeta{Name: "kit"}}
		b.Status.Phase = phase
		b.Status.Image, b.Status.Digest = "registry/kit:h", "sha256:d"
		b.Status.Artifacts = []camelv1.Artifact{{ID: "org.apache.camel:camel-jackson:jar:4.18.0", Checksum: "sha256:c"}}
		b.Status.Conditions = []metav1.Condition{{Type: camelv1.ConditionReady, Status: status, Reason: reason, Message: message}}
		if phase == camelv1.BuildPhaseError {
			b.Status.Failure = &camelv1.Failure{Reason: message}
		}
		return b
	}
	cases := []struct {
		name      string
		image     string // the kit's spec.image
		scope     scope
		phase     camelv1.IntegrationKitPhase
		reason    controller.Reason
		progress  string // the condition that holds besides Ready, "" for none
		kitImage  string
		isFailure bool
	}{
		{name: "an invalid kit is in Error and stalled until the user fixes it",
			scope: scope{Outcome: controller.Outcome{Failure: controller.Because(ReasonInvalidKit, "bad dependency")}},
			phase: camelv1.IntegrationKitPhaseError, reason: ReasonInvalidKit, progress: camelv1.ConditionStalled},
		{name: "an external kit is Ready with its own image", image: "quay.io/team/app:1",
			scope: scope{Outcome: controller.Outcome{Done: true}},
			phase: camelv1.IntegrationKitPhaseReady, reason: ReasonExternalImage, kitImage: "quay.io/team/app:1"},
		{name: "a kit whose Build this reconcile created is Build Submitted", scope: scope{submitted: true},
			phase: camelv1.IntegrationKitPhaseBuildSubmitted, reason: ReasonBuildSubmitted, progress: camelv1.ConditionReconciling},
		{name: "a kit whose Build runs is Build Running with the Build's reason",
			scope: scope{build: buildIn(camelv1.BuildPhaseRunning, metav1.ConditionFalse, "Running", "attempt 1 is running")},
			phase: camelv1.IntegrationKitPhaseBuildRunning, reason: "Running", progress: camelv1.ConditionReconciling},
		{name: "a kit whose Build succeeded is Ready with the Build's image and artifacts",
			scope: scope{build: buildIn(camelv1.BuildPhaseSucceeded, metav1.ConditionTrue, "Succeeded", "built")},
			phase: camelv1.IntegrationKitPhaseReady, reason: ReasonBuilt, kitImage: "registry/kit:h"},
		{name: "a kit whose Build failed for good is in Error with the Build's failure",
			scope: scope{build: buildIn(camelv1.BuildPhaseError, metav1.ConditionFalse, "BuildFailed", "no space left")},
			phase: camelv1.IntegrationKitPhaseError, reason: "BuildFailed", progress: camelv1.ConditionStalled, isFailure: true},
		{name: "a kit whose Build was not read keeps the status it had",
			phase: camelv1.IntegrationKitPhaseBuildRunning, reason: "Running", progress: camelv1.ConditionReconciling},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := &camelv1.IntegrationKit{ObjectMeta: metav1.ObjectMeta{Name: "kit", Generation: 2}}
			k.Spec.Image = tc.image
			// As a previous reconcile left it, while the Build ran.
			setStatus(k, camelv1.IntegrationKitPhaseBuildRunning, metav1.ConditionFalse, "Running", "build kit: attempt 1 is running")
			s := tc.scope
			s.k = k
			computeStatus(&s)
			st := k.Status
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
			if st.Image != tc.kitImage {
				t.Errorf("image %q, want %q", st.Image, tc.kitImage)
			}
			if built := tc.reason == ReasonBuilt; built != (len(st.Artifacts) == 1) {
				t.Errorf("artifacts %+v", st.Artifacts)
			}
			if (st.Failure != nil) != tc.isFailure {
				t.Errorf("failure %+v", st.Failure)
			}
			if st.ObservedGeneration != 2 {
				t.Errorf("observed generation %d", st.ObservedGeneration)
			}
		})
	}
}

func TestAnAdoptedKitSaysWhoseImageItRuns(t *testing.T) {
	k := &camelv1.IntegrationKit{ObjectMeta: metav1.ObjectMeta{Name: "kit-b",
		Annotations: map[string]string{kit.AdoptedFromAnnotation: "kit-a"}}}
	k.Spec.Image = "registry/kit-a@sha256:d"
	computeStatus(&scope{k: k, Outcome: controller.Outcome{Done: true}})
	ready := meta.FindStatusCondition(k.Status.Conditions, camelv1.ConditionReady)
	want := "the kit runs the image registry/kit-a@sha256:d of kit kit-a, made for the same dependencies: a moved integration keeps its pods"
	if k.Status.Phase != camelv1.IntegrationKitPhaseReady || ready == nil || ready.Message != want {
		t.Errorf("phase %q, Ready %+v; want Ready with %q", k.Status.Phase, ready, want)
	}
}
