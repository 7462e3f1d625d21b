package integrationcontroller

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestARunningPodWhoseRuntimeSaysItIsNotReadyNamesTheFailingChecks(t *testing.T) {
	answer := http.StatusServiceUnavailable
	body := `{"status":"DOWN","checks":[{"name":"context","status":"UP"},
		{"name":"camel-routes","status":"DOWN","data":{"route.id":"route1","route.status":"Stopped"}},{"name":"never-ready","status":"DOWN"},
		{"name":"route:stopped","status":"DOWN","message":"Route stopped has status Stopped"}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/observe/health/ready" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(answer)
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	portNum, _ := strconv.Atoi(port)
	pod := func(name string, ready bool) corev1.Pod {
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		p := corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "integration",
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/observe/health/ready", Port: intstr.FromInt(portNum)}}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: host,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}}}
		p.Name = name
		return p
	}
	pods := []corev1.Pod{pod("it-a", false), pod("it-b", true)}

	got := runtimeNotReady(context.Background(), readHealth, pods, "integration")
	if got == nil || got.Reason != ReasonRuntimeNotReady {
		t.Fatalf("got %+v, want RuntimeNotReady", got)
	}
	want := "1/2 pods are not ready: the runtime's readiness checks fail: pod it-a: camel-routes (route route1: Stopped) DOWN, never-ready DOWN, route:stopped (Route stopped has status Stopped) DOWN"
	if got.Message != want {
		t.Errorf("message %q, want %q", got.Message, want)
	}

	for _, c := range []struct {
		name   string
		status int
		body   string
	}{
		{"a runtime that answers 200 is not failing", http.StatusOK, body},
		{"an answer that is not Camel's report tells nothing", http.StatusServiceUnavailable, "<html>busy</html>"},
		{"a report whose checks are all up tells nothing", http.StatusServiceUnavailable, `{"status":"DOWN","checks":[{"name":"context","status":"UP"}]}`},
	} {
		answer, body = c.status, c.body
		if got := runtimeNotReady(context.Background(), readHealth, pods, "integration"); got != nil {
			t.Errorf("%s: got %+v", c.name, got)
		}
	}
	answer = http.StatusServiceUnavailable
	if got := runtimeNotReady(context.Background(), readHealth, pods, "other"); got != nil {
		t.Errorf("a pod probed on another container is read: %+v", got)
	}
}
