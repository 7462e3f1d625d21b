package harness

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/caravan-dev/caravan/internal/operatorpod"
)

// OperatorPods lists the pods of installed operator id in namespace.
func (e *Env) OperatorPods(t testing.TB, namespace, id string) []corev1.Pod {
	t.Helper()
	pods, err := operatorpod.List(context.Background(), e.Client, namespace, id)
	if err != nil {
		t.Fatal(err)
	}
	return pods
}

// OperatorMetricsURL is the metrics endpoint of the running pod of
// installed operator id in namespace.
func (e *Env) OperatorMetricsURL(t testing.TB, namespace, id string) string {
	t.Helper()
	if pods := operatorpod.Running(e.OperatorPods(t, namespace, id)); len(pods) > 0 {
		return PodMetricsURL(pods[0].Status.PodIP)
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
	e.ScaleOperator(t, namespace, id, 0)
}

// killPodProcesses sends SIGKILL to the processes of the process node
// that run pod namespace/name, and returns how many it killed.
func killPodProcesses(t testing.TB, namespace, name string) int {
	t.Helper()
	killed := 0
	for _, pid := range PodProcesses(namespace, name) {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Logf("killing pid %d of pod %s/%s: %v", pid, namespace, name, err)
			continue
		}
		killed++
	}
	if killed == 0 {
		t.Logf("no process of pod %s/%s found", namespace, name)
	}
	return killed
}

// PodProcesses lists the processes of this machine that run a container
// of pod namespace/name on the process node (of any pod of namespace when
// name is ""): their environment names the pod.
func PodProcesses(namespace, name string) []int {
	environs, _ := filepath.Glob("/proc/[0-9]*/environ")
	wantNS := []byte("POD_NAMESPACE=" + namespace + "\x00")
	wantName := []byte("POD_NAME=" + name + "\x00")
	var pids []int
	for _, environ := range environs {
		data, err := os.ReadFile(environ)
		if err != nil || !bytes.Contains(data, wantNS) || (name != "" && !bytes.Contains(data, wantName)) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(environ))); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}
