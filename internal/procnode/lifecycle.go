package procnode

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// CreatePod starts a pod: its address and volumes, then each container,
// pulled and confined, in the background.
func (n *Node) CreatePod(ctx context.Context, pod *corev1.Pod) error {
	k := key(pod.Namespace, pod.Name)
	n.mu.Lock()
	if _, ok := n.pods[k]; ok {
		n.mu.Unlock()
		return nil
	}
	ip, err := n.allocateIP(pod)
	if err != nil {
		n.mu.Unlock()
		return err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	r := &podRun{ip: ip, dir: filepath.Join(n.cfg.Dir, "pods", string(pod.UID)), cancel: cancel,
		done: make(chan struct{}), notify: n.report, pod: pod.DeepCopy(), started: time.Now()}
	initPolicy := corev1.RestartPolicyOnFailure
	if pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
		initPolicy = corev1.RestartPolicyNever
	}
	for _, c := range pod.Spec.InitContainers {
		r.inits = append(r.inits, &container{pod: r, spec: c, dir: filepath.Join(r.dir, "init-containers", c.Name),
			policy: initPolicy, status: corev1.ContainerStatus{State: corev1.ContainerState{
				Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}})
	}
	for _, c := range pod.Spec.Containers {
		r.containers = append(r.containers, &container{pod: r, spec: c, dir: filepath.Join(r.dir, "containers", c.Name),
			policy: pod.Spec.RestartPolicy, status: corev1.ContainerStatus{State: corev1.ContainerState{
				Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}})
	}
	if len(r.inits) > 0 {
		for _, c := range r.containers {
			c.status.State.Waiting.Reason = "PodInitializing"
		}
	}
	n.pods[k] = r
	n.mu.Unlock()
	r.report()
	go n.runPod(runCtx, r)
	return nil
}

// runPod prepares the volumes and runs the containers until the pod is deleted.
func (n *Node) runPod(ctx context.Context, r *podRun) {
	defer close(r.done)
	volumes, err := mountWhenReady(ctx, func() (map[string]string, error) {
		return n.volumes.prepare(ctx, r.withIPs(), filepath.Join(r.dir, "volumes"))
	}, func(err error) { n.event(r.pod, corev1.EventTypeWarning, "FailedMount", err.Error()) }, mountBackoffStart, backoffMax)
	if err != nil {
		return // deleted while it waited
	}
	go n.refreshTokens(ctx, r)
	grace := func() time.Duration {
		r.mu.Lock()
		defer r.mu.Unlock()
		if g := r.pod.DeletionGracePeriodSeconds; g != nil {
			return time.Duration(*g) * time.Second
		}
		if g := r.pod.Spec.TerminationGracePeriodSeconds; g != nil {
			return time.Duration(*g) * time.Second
		}
		return 30 * time.Second
	}
	// Init containers run one at a time, each to success; one that fails
	// and is not restarted ends the pod.
	for _, c := range r.inits {
		n.runContainer(ctx, c, volumes, grace)
		if ctx.Err() != nil || r.exitCode(c) != 0 {
			return
		}
	}
	var wg sync.WaitGroup
	for _, c := range r.containers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.runContainer(ctx, c, volumes, grace)
		}()
	}
	wg.Wait()
}

// runContainer prepares c, retrying a failed pull with back-off, then runs it.
func (n *Node) runContainer(ctx context.Context, c *container, volumes map[string]string, grace func() time.Duration) {
	wait := backoffStart
	for {
		err := c.prepare(ctx, n, volumes)
		if err == nil {
			n.event(c.pod.pod, corev1.EventTypeNormal, "Started", "Started container "+c.spec.Name)
			c.run(ctx, n, grace)
			return
		}
		n.event(c.pod.pod, corev1.EventTypeWarning, "Failed", err.Error())
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(wait*2, backoffMax)
	}
}

// refreshTokens writes the pod's projected volumes again every ten minutes,
// so that its ServiceAccount token is renewed long before it expires.
func (n *Node) refreshTokens(ctx context.Context, r *podRun) {
	t := time.NewTicker(10 * time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := n.volumes.prepare(ctx, r.withIPs(), filepath.Join(r.dir, "volumes")); err != nil {
				n.event(r.pod, corev1.EventTypeWarning, "FailedMount", "renewing the volumes: "+err.Error())
			}
		}
	}
}

// DeletePod stops a pod's containers within its grace period, reports
// them terminated and forgets the pod.
func (n *Node) DeletePod(_ context.Context, pod *corev1.Pod) error {
	k := key(pod.Namespace, pod.Name)
	n.mu.Lock()
	r, ok := n.pods[k]
	n.mu.Unlock()
	if !ok {
		return errdefs.NotFoundf("pod %s is not on this node", k)
	}
	r.mu.Lock()
	r.deleting = true
	r.pod.DeletionGracePeriodSeconds = pod.DeletionGracePeriodSeconds
	r.mu.Unlock()
	r.cancel()
	go func() {
		<-r.done
		r.mu.Lock()
		for _, c := range append(append([]*container(nil), r.inits...), r.containers...) {
			if c.status.State.Terminated == nil {
				c.status.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 0, Reason: "Completed", FinishedAt: now()}}
				c.status.Ready = false
			}
		}
		r.mu.Unlock()
		r.report()
		n.finishDeletion(pod)
		n.mu.Lock()
		delete(n.pods, k)
		delete(n.ips, r.ip)
		n.mu.Unlock()
		_ = os.RemoveAll(r.dir)
	}()
	return nil
}

// finishDeletion removes a pod whose containers have all stopped from the
// API server, as a kubelet does, rather than after its whole grace period.
func (n *Node) finishDeletion(pod *corev1.Pod) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := n.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0), Preconditions: metav1.NewUIDPreconditions(string(pod.UID))})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		n.event(pod, corev1.EventTypeWarning, "FailedDelete", "removing the stopped pod: "+err.Error())
	}
}

// stopAll stops every pod, when the node stops.
func (n *Node) stopAll() {
	n.mu.Lock()
	runs := make([]*podRun, 0, len(n.pods))
	for _, r := range n.pods {
		runs = append(runs, r)
	}
	n.mu.Unlock()
	for _, r := range runs {
		r.cancel()
	}
	for _, r := range runs {
		<-r.done
	}
}

// containerLogs serves kubectl logs: the container's current log, or its
// previous one, since a time, tailed, with or without each line's time,
// limited, and followed while the container runs.
func (n *Node) containerLogs(ctx context.Context, namespace, podName, name string, opts api.ContainerLogOpts) (io.ReadCloser, error) {
	n.mu.Lock()
	r, ok := n.pods[key(namespace, podName)]
	n.mu.Unlock()
	if !ok {
		return nil, errdefs.NotFoundf("pod %s/%s is not on this node", namespace, podName)
	}
	var c *container
	for _, cc := range append(append([]*container(nil), r.inits...), r.containers...) {
		if cc.spec.Name == name {
			c = cc
		}
	}
	if c == nil {
		return nil, errdefs.NotFoundf("pod %s/%s has no container %s", namespace, podName, name)
	}
	restart := r.restartCount(c)
	if opts.Previous {
		if restart == 0 {
			return nil, errdefs.InvalidInputf("previous terminated container %s in pod %s/%s not found", name, namespace, podName)
		}
		restart--
	}
	data, err := os.ReadFile(c.logPath(restart))
	if err != nil {
		return nil, errdefs.NotFoundf("container %s has no log yet", name)
	}
	q := logQuery{tail: opts.Tail, timestamps: opts.Timestamps, since: opts.SinceTime}
	if opts.SinceSeconds > 0 {
		q.since = time.Now().Add(-time.Duration(opts.SinceSeconds) * time.Second)
	}
	lines, rest := parseLog(data)
	out := q.render(lines)
	if opts.LimitBytes > 0 && len(out) > opts.LimitBytes {
		out = out[:opts.LimitBytes]
	}
	if !opts.Follow || opts.Previous {
		return io.NopCloser(bytes.NewReader(out)), nil
	}
	pr, pw := io.Pipe()
	offset := int64(len(data) - len(rest))
	go follow(ctx, pw, out, c.logPath(restart), offset, q, func() bool { return r.restartCount(c) == restart && ctx.Err() == nil })
	return pr, nil
}

// mountBackoffStart is the first wait before the volumes of a pod are tried again.
const mountBackoffStart = 500 * time.Millisecond

// mountWhenReady prepares a pod's volumes until that succeeds or ctx ends, as a kubelet mounts
// them: a ConfigMap or Secret a pod mounts may be created after it (Camel K's operator creates
// them alongside the Deployment). Each failure is reported to failed, and the wait between tries
// doubles from start up to max.
func mountWhenReady(ctx context.Context, prepare func() (map[string]string, error), failed func(error), start, max time.Duration) (map[string]string, error) {
	wait := start
	for {
		volumes, err := prepare()
		if err == nil {
			return volumes, nil
		}
		failed(err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(wait*2, max)
	}
}
