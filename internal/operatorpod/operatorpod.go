// Package operatorpod handles an installed operator through its pods, as
// the tests and the bench do. It lists them, picks the running ones and
// their endpoints, reads their logs, and scales the operator's Deployment.
package operatorpod

import (
	"context"
	"fmt"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/internal/install"
)

// poll is how often WaitNoPods lists the pods again.
const poll = 100 * time.Millisecond

// List lists the pods of operator id in namespace, by the labels that
// `caravan install` gives them.
func List(ctx context.Context, c client.Reader, namespace, id string) ([]corev1.Pod, error) {
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(namespace),
		client.MatchingLabels(install.Labels(id))); err != nil {
		return nil, fmt.Errorf("listing the pods of operator %s: %w", id, err)
	}
	return pods.Items, nil
}

// Running keeps the pods that are running, have an address and are not
// being deleted, oldest first.
func Running(pods []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreationTimestamp.Before(&out[j].CreationTimestamp) })
	return out
}

// Newest is the newest of the running pods, and false when none runs.
func Newest(pods []corev1.Pod) (corev1.Pod, bool) {
	running := Running(pods)
	if len(running) == 0 {
		return corev1.Pod{}, false
	}
	return running[len(running)-1], true
}

// MetricsURL is the metrics endpoint of the operator pod at address: HTTPS,
// read with a Scraper.
func MetricsURL(address string) string {
	return fmt.Sprintf("https://%s:%d/metrics", address, install.MetricsPort)
}

// ProbeURL is the URL of path (such as /readyz) on the probe port of the
// operator pod at address.
func ProbeURL(address, path string) string {
	return fmt.Sprintf("http://%s:%d%s", address, install.ProbesPort, path)
}

// PprofURL is the root of the /debug/pprof endpoints of the operator pod at
// address, when it was installed to serve them: beside the metrics, read with
// a Scraper.
func PprofURL(address string) string {
	return fmt.Sprintf("https://%s:%d", address, install.MetricsPort)
}

// Log is the log of pod namespace/name as `kubectl logs` gives it: its
// last tail lines, or all of it when tail is 0. A log that cannot be read
// is a line that says why, for whoever reads it (a failed test, an
// error message).
func Log(ctx context.Context, cs kubernetes.Interface, namespace, name string, tail int64) string {
	opts := &corev1.PodLogOptions{}
	if tail > 0 {
		opts.TailLines = &tail
	}
	data, err := cs.CoreV1().Pods(namespace).GetLogs(name, opts).DoRaw(ctx)
	if err != nil {
		return fmt.Sprintf("(log of pod %s: %v)\n", name, err)
	}
	return string(data)
}

// Scale sets the replicas of the Deployment of operator id in namespace.
func Scale(ctx context.Context, c client.Client, namespace, id string, replicas int32) error {
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, install.OperatorDeployment(id, namespace), d); err != nil {
		return fmt.Errorf("scaling operator %s to %d: %w", id, replicas, err)
	}
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = ptr.To(replicas)
	if err := c.Patch(ctx, d, patch); err != nil {
		return fmt.Errorf("scaling operator %s to %d: %w", id, replicas, err)
	}
	return nil
}

// WaitNoPods waits until operator id in namespace has no pod left, or ctx
// ends.
func WaitNoPods(ctx context.Context, c client.Reader, namespace, id string) error {
	err := wait.PollUntilContextCancel(ctx, poll, true, func(ctx context.Context) (bool, error) {
		pods, err := List(ctx, c, namespace, id)
		return err == nil && len(pods) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("the pods of operator %s are still there: %w", id, err)
	}
	return nil
}

// Stop stops operator id in namespace gracefully, releasing its leader
// lease: it scales its Deployment to 0 and waits until its pods are gone.
func Stop(ctx context.Context, c client.Client, namespace, id string) error {
	if err := Scale(ctx, c, namespace, id, 0); err != nil {
		return err
	}
	return WaitNoPods(ctx, c, namespace, id)
}
