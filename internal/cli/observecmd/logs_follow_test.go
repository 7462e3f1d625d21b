package observecmd

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFollowStreamsEachRunOfAContainerOnce(t *testing.T) {
	o := &LogsOptions{}
	t0, t1 := metav1.NewTime(time.Unix(100, 0)), metav1.NewTime(time.Unix(130, 0))
	pod := func(cs corev1.ContainerStatus) *corev1.Pod {
		cs.Name, cs.ContainerID = "integration", "caravan://p/integration"
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "p"},
			Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "integration"}}},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{cs}}}
	}
	running := func(at metav1.Time, restarts int32) *corev1.Pod {
		return pod(corev1.ContainerStatus{RestartCount: restarts, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}}})
	}
	waiting := func(last metav1.Time, restarts int32) *corev1.Pod {
		return pod(corev1.ContainerStatus{RestartCount: restarts,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, StartedAt: last, ContainerID: "caravan://p/integration"}}})
	}
	creating := pod(corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}})
	streamed := map[string]bool{}
	for i, step := range []struct {
		pod            *corev1.Pod
		stream, before bool
	}{
		{pod: creating},
		{pod: running(t0, 0), stream: true},
		{pod: running(t0, 0)},
		// The run that ended waits to restart, whatever restart count it shows: it was streamed.
		{pod: waiting(t0, 0)},
		{pod: waiting(t0, 1)},
		{pod: running(t1, 1), stream: true},
		// A run that ended before it was seen running is still the current one while the container waits.
		{pod: waiting(metav1.NewTime(time.Unix(160, 0)), 2), stream: true},
	} {
		req, ok := o.nextRun(step.pod, streamed)
		if ok != step.stream || ok && req.previous != step.before {
			t.Fatalf("step %d: stream %v (previous %v), want %v (previous %v)", i, ok, req.previous, step.stream, step.before)
		}
		if ok && req.container != "integration" {
			t.Fatalf("step %d: container %q", i, req.container)
		}
	}
}

func TestLogsRefusesFlagsThatCannotGoTogether(t *testing.T) {
	for _, tc := range []struct {
		o    LogsOptions
		want string
	}{
		{o: LogsOptions{Tail: -2}, want: "--tail must be 0 or more"},
		{o: LogsOptions{Tail: -1, Since: -time.Second}, want: "--since must be positive"},
		{o: LogsOptions{Tail: -1, Previous: true, Follow: true}, want: "--previous prints a run that ended"},
	} {
		if err := tc.o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.o, err, tc.want)
		}
	}
}
