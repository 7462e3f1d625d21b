package operatorpod

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// pod is a pod named name, created age ago, in phase with address ip.
func pod(name string, age time.Duration, phase corev1.PodPhase, ip string) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Now().Add(-age))},
		Status:     corev1.PodStatus{Phase: phase, PodIP: ip},
	}
}

// deleted is p being deleted.
func deleted(p corev1.Pod) corev1.Pod {
	p.DeletionTimestamp = ptr.To(metav1.Now())
	return p
}

func names(pods []corev1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func TestRunning(t *testing.T) {
	cases := []struct {
		name string
		pods []corev1.Pod
		want []string
	}{
		{name: "no pods leave none running", want: []string{}},
		{name: "a pending pod does not run",
			pods: []corev1.Pod{pod("a", time.Minute, corev1.PodPending, "")}, want: []string{}},
		{name: "a running pod without an address does not count",
			pods: []corev1.Pod{pod("a", time.Minute, corev1.PodRunning, "")}, want: []string{}},
		{name: "a running pod that is being deleted does not count",
			pods: []corev1.Pod{deleted(pod("a", time.Minute, corev1.PodRunning, "10.0.0.1"))}, want: []string{}},
		{name: "running pods come oldest first",
			pods: []corev1.Pod{
				pod("young", time.Second, corev1.PodRunning, "10.0.0.2"),
				pod("failed", time.Hour, corev1.PodFailed, "10.0.0.3"),
				pod("old", time.Minute, corev1.PodRunning, "10.0.0.1"),
			},
			want: []string{"old", "young"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(Running(tc.pods)); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNewest(t *testing.T) {
	cases := []struct {
		name   string
		pods   []corev1.Pod
		want   string
		wantOK bool
	}{
		{name: "no running pod gives none", pods: []corev1.Pod{pod("a", time.Minute, corev1.PodPending, "")}},
		{name: "the youngest running pod is the newest",
			pods: []corev1.Pod{
				pod("old", time.Minute, corev1.PodRunning, "10.0.0.1"),
				pod("young", time.Second, corev1.PodRunning, "10.0.0.2"),
				pod("starting", 0, corev1.PodPending, ""),
			},
			want: "young", wantOK: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Newest(tc.pods)
			if got.Name != tc.want || ok != tc.wantOK {
				t.Fatalf("got %q, %v, want %q, %v", got.Name, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestEndpoints(t *testing.T) {
	cases := []struct {
		name string
		got  string
		want string
	}{
		{name: "metrics are served over HTTPS on the metrics port", got: MetricsURL("10.0.0.1"), want: "https://10.0.0.1:8443/metrics"},
		{name: "a probe is served on the probes port", got: ProbeURL("10.0.0.1", "/readyz?verbose"), want: "http://10.0.0.1:8081/readyz?verbose"},
		{name: "pprof is served beside the metrics", got: PprofURL("10.0.0.1"), want: "https://10.0.0.1:8443"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Fatalf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}
