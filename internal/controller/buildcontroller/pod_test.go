package buildcontroller

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestABuilderPodThatCannotStartSaysWhatItWaitsForAndSinceWhen(t *testing.T) {
	created := time.Date(2026, 12, 6, 16, 0, 0, 0, time.UTC)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "kit-1-builder-1", CreationTimestamp: metav1.NewTime(created)}}
	if got := waitingFor(pod); got != "" {
		t.Fatalf("a pod nothing holds back waits for %q", got)
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodInitialized, Status: corev1.ConditionFalse,
		LastTransitionTime: metav1.NewTime(created.Add(2 * time.Second))}}
	pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "maven", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
		Reason: "ErrImagePull", Message: "pulling 127.0.0.1:5000/caravan/builder:java17: connection refused"}}}}
	got := waitingFor(pod)
	for _, want := range []string{"container maven of the builder pod kit-1-builder-1 is waiting: ErrImagePull: pulling 127.0.0.1:5000/caravan/builder:java17: connection refused",
		"(since 2026-12-06T16:00:02Z)"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q does not say %q", got, want)
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Message: "0/1 nodes are available: persistentvolumeclaim \"ops-maven\" not found"})
	if got := waitingFor(pod); !strings.HasPrefix(got, `the builder pod kit-1-builder-1 was not scheduled: 0/1 nodes are available`) {
		t.Errorf("an unscheduled pod says %q", got)
	}
}
