package integrationkitcontroller

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/kit"
)

// computeStatus derives the kit's phase and conditions from what the steps observed.
// The phase is a label for the user; no step reads it.
func computeStatus(s *scope) {
	k := s.k
	k.Status.ObservedGeneration = k.Generation
	switch {
	case s.Failure != nil:
		setStatus(k, camelv1.IntegrationKitPhaseError, metav1.ConditionFalse, s.Failure.Reason, s.Failure.Message)
	case k.Spec.Image != "":
		k.Status.Image = k.Spec.Image
		message := "the kit runs the pre-built image " + k.Spec.Image
		if from := k.Annotations[kit.AdoptedFromAnnotation]; from != "" {
			message = fmt.Sprintf("the kit runs the image %s of kit %s, made for the same dependencies: "+
				"a moved integration keeps its pods", k.Spec.Image, from)
		}
		setStatus(k, camelv1.IntegrationKitPhaseReady, metav1.ConditionTrue, ReasonExternalImage, message)
	case s.submitted:
		setStatus(k, camelv1.IntegrationKitPhaseBuildSubmitted, metav1.ConditionFalse, ReasonBuildSubmitted, "the kit's build is submitted")
	case s.build != nil:
		fromBuild(k, s.build)
	default:
		// The Build could not be read: the status stays as it was.
	}
}

// fromBuild derives the kit's status from its build's.
func fromBuild(k *camelv1.IntegrationKit, b *camelv1.Build) {
	c := b.Status.GetCondition(camelv1.ConditionReady)
	reason, message := ReasonBuildSubmitted, "the kit's build is submitted"
	if c != nil {
		reason, message = controller.Reason(c.Reason), "build "+b.Name+": "+c.Message
	}
	switch b.Status.Phase {
	case camelv1.BuildPhaseSucceeded:
		k.Status.Image, k.Status.Digest, k.Status.BaseImage = b.Status.Image, b.Status.Digest, b.Status.BaseImage
		k.Status.Failure = nil
		k.Status.Artifacts = b.Status.Artifacts
		if c := b.Status.GetCondition(kit.ArchiveCondition); c != nil {
			archive := *c
			archive.ObservedGeneration = k.Generation
			k.Status.SetCondition(archive)
		}
		setStatus(k, camelv1.IntegrationKitPhaseReady, metav1.ConditionTrue, ReasonBuilt, "built "+b.Status.Image)
	case camelv1.BuildPhaseError:
		k.Status.Failure = b.Status.Failure.DeepCopy()
		setStatus(k, camelv1.IntegrationKitPhaseError, metav1.ConditionFalse, reason, message)
	case camelv1.BuildPhaseRunning:
		setStatus(k, camelv1.IntegrationKitPhaseBuildRunning, metav1.ConditionFalse, reason, message)
	default:
		k.Status.Failure = b.Status.Failure.DeepCopy()
		setStatus(k, camelv1.IntegrationKitPhaseBuildSubmitted, metav1.ConditionFalse, reason, message)
	}
}

// setStatus sets the kit's phase, and Ready with Reconciling or Stalled as the phase tells.
func setStatus(k *camelv1.IntegrationKit, phase camelv1.IntegrationKitPhase, status metav1.ConditionStatus, reason controller.Reason, message string) {
	k.Status.Phase = phase
	progress := controller.ProgressOf(phase, camelv1.IntegrationKitPhaseReady, camelv1.IntegrationKitPhaseError)
	controller.SetProgress(&k.Status.Conditions, k.Generation, status, progress, reason, message)
}
