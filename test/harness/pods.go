package harness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OperatorPods lists the pods of installed operator id in namespace.
func (e *Env) OperatorPods(t testing.TB, namespace, id string) []corev1.Pod {
	t.Helper()
	pods := &corev1.PodList{}
	if err := e.Client.List(context.Background(), pods, client.InNamespace(namespace),
		client.MatchingLabels{"app.kubernetes.io/name": "caravan-operator", "app.kubernetes.io/instance": id}); err != nil {
		t.Fatalf("listing the pods of operator %s: %v", id, err)
	}
	return pods.Items
}

// OperatorMetricsURL is the metrics endpoint of the running pod of
// installed operator id in namespace.
func (e *Env) OperatorMetricsURL(t testing.TB, namespace, id string) string {
	t.Helper()
	for _, p := range e.OperatorPods(t, namespace, id) {
		if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && p.DeletionTimestamp == nil {
			return "http://" + p.Status.PodIP + ":8080/metrics"
		}
	}
	t.Fatalf("no running pod of operator %s in %s", id, namespace)
	return ""
}

// KillOperator stops installed operator id in namespace as a crash does:
// SIGKILL to its pods' processes (no release of anything), then its
// Deployment scaled to 0, so that it does not come back.
func (e *Env) KillOperator(t testing.TB, namespace, id string) {
	t.Helper()
	killed := 0
	for _, p := range e.OperatorPods(t, namespace, id) {
		killed += killPodProcesses(t, p.Namespace, p.Name)
	}
	if killed == 0 {
		t.Fatalf("no process of operator %s in %s to kill", id, namespace)
	}
	d := &appsv1.Deployment{}
	key := client.ObjectKey{Namespace: namespace, Name: id + "-operator"}
	if err := e.Client.Get(context.Background(), key, d); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = ptr.To[int32](0)
	if err := e.Client.Patch(context.Background(), d, patch); err != nil {
		t.Fatalf("scaling operator %s to 0: %v", id, err)
	}
}

// killPodProcesses sends SIGKILL to the processes of the process node
// that run pod namespace/name (their environment names it), and returns
// how many it killed.
func killPodProcesses(t testing.TB, namespace, name string) int {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/environ")
	if err != nil {
		t.Fatal(err)
	}
	wantName, wantNS := []byte("POD_NAME="+name+"\x00"), []byte("POD_NAMESPACE="+namespace+"\x00")
	killed := 0
	for _, environ := range procs {
		data, err := os.ReadFile(environ)
		if err != nil || !bytes.Contains(data, wantName) || !bytes.Contains(data, wantNS) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(environ)))
		if err != nil {
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Logf("killing pid %d of pod %s/%s: %v", pid, namespace, name, err)
			continue
		}
		killed++
	}
	if killed == 0 {
		t.Logf("%s", fmt.Sprintf("no process of pod %s/%s found", namespace, name))
	}
	return killed
}
