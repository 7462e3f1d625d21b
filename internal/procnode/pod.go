package procnode

import (
	"context"
	"os"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// podRun is a pod the node runs: its containers and the status they give.
type podRun struct {
	// ip is the pod's address, a loopback address of its own.
	ip string
	// dir holds the pod's volumes and containers.
	dir    string
	cancel context.CancelFunc
	// done is closed when every container has stopped.
	done chan struct{}
	// notify reports a status change to the API server.
	notify func(*corev1.Pod)

	mu         sync.Mutex // guards the fields below and the containers' status
	pod        *corev1.Pod
	inits      []*container
	containers []*container
	started    time.Time
	deleting   bool
	// conditions are the last reported, whose transition times are kept.
	conditions []corev1.PodCondition
}

// withIPs returns the pod with its addresses in the status, for the
// downward API.
func (r *podRun) withIPs() *corev1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pod.DeepCopy()
	p.Status.PodIP, p.Status.HostIP = r.ip, nodeIP
	return p
}

func (r *podRun) update(c *container, f func(s *corev1.ContainerStatus)) {
	r.mu.Lock()
	f(&c.status)
	r.mu.Unlock()
	r.report()
}

func (r *podRun) setWaiting(c *container, reason, message string) {
	r.update(c, func(s *corev1.ContainerStatus) {
		if s.State.Terminated != nil {
			s.LastTerminationState = corev1.ContainerState{Terminated: s.State.Terminated}
		}
		s.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
		s.Ready, s.Started = false, ptr.To(false)
	})
}

func (r *podRun) setRunning(c *container, p *os.Process) {
	r.update(c, func(s *corev1.ContainerStatus) {
		c.process = p
		s.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now()}}
		s.Started, s.Ready = ptr.To(true), false
		s.ImageID, s.ContainerID = c.image.Digest, "caravan://"+string(r.pod.UID)+"/"+c.spec.Name
	})
}

// exitCode is a process's exit code as a kubelet reports it: 128 plus the
// signal that killed it, if one did.
func exitCode(state *os.ProcessState) int32 {
	if state == nil {
		return 0
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int32(ws.Signal())
	}
	return int32(state.ExitCode())
}

// setTerminated records that c's process ended with code and message.
func (r *podRun) setTerminated(c *container, code int32, message string) {
	r.update(c, func(s *corev1.ContainerStatus) {
		reason := "Completed"
		if code != 0 {
			reason = "Error"
		}
		var startedAt = now()
		if s.State.Running != nil {
			startedAt = s.State.Running.StartedAt
		}
		s.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: reason, Message: message, StartedAt: startedAt, FinishedAt: now(), ContainerID: s.ContainerID}}
		s.Ready, s.Started = false, ptr.To(false)
		c.process = nil
	})
}

// restarted counts a restart of c (its last termination was kept when it
// started waiting).
func (r *podRun) restarted(c *container) {
	r.update(c, func(s *corev1.ContainerStatus) { s.RestartCount++ })
}

// setStarted records whether c's startup probe has succeeded; a running container without one
// is started at once.
func (r *podRun) setStarted(c *container, started bool) {
	r.update(c, func(s *corev1.ContainerStatus) {
		if s.State.Running != nil {
			s.Started = ptr.To(started)
		}
	})
}

func (r *podRun) setReady(c *container, ready bool) {
	r.update(c, func(s *corev1.ContainerStatus) {
		if s.State.Running != nil {
			s.Ready = ready
		}
	})
}

func (r *podRun) exitCode(c *container) int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := c.status.State.Terminated; t != nil {
		return t.ExitCode
	}
	if t := c.status.LastTerminationState.Terminated; t != nil {
		return t.ExitCode
	}
	return 0
}

func (r *podRun) restartCount(c *container) int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return c.status.RestartCount
}

// pid is the container's current process, 0 when none runs.
func (r *podRun) pid(c *container) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c.process == nil {
		return 0
	}
	return c.process.Pid
}

// report sends the current status.
func (r *podRun) report() {
	r.notify(r.snapshot())
}

// snapshot is the pod with its current status.
func (r *podRun) snapshot() *corev1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pod.DeepCopy()
	p.Status = r.statusLocked()
	return p
}

// statusLocked computes the pod status from its containers' statuses.
func (r *podRun) statusLocked() corev1.PodStatus {
	st := corev1.PodStatus{HostIP: nodeIP, HostIPs: []corev1.HostIP{{IP: nodeIP}},
		PodIP: r.ip, PodIPs: []corev1.PodIP{{IP: r.ip}}, StartTime: ptr.To(metaTime(r.started)),
		QOSClass: r.pod.Status.QOSClass}
	initialized, initFailed := r.initStatusLocked(&st)
	running, terminated, restarting, failed, ready := 0, 0, 0, 0, 0
	for _, c := range r.containers {
		s := c.status
		s.Name, s.Image = c.spec.Name, c.spec.Image
		st.ContainerStatuses = append(st.ContainerStatuses, s)
		switch {
		case s.State.Running != nil:
			running++
		case s.State.Terminated != nil:
			terminated++
			if s.State.Terminated.ExitCode != 0 {
				failed++
			}
		case s.State.Waiting != nil && s.LastTerminationState.Terminated != nil:
			// Waiting to restart after it ran: a kubelet keeps such a pod Running.
			restarting++
		}
		if s.Ready {
			ready++
		}
	}
	n := len(r.containers)
	if st.Phase == "" && initFailed {
		st.Phase = corev1.PodFailed
	}
	if st.Phase == "" {
		st.Phase = corev1.PodPending
		switch {
		case terminated == n && n > 0 && (r.pod.Spec.RestartPolicy == corev1.RestartPolicyNever || r.deleting ||
			(r.pod.Spec.RestartPolicy == corev1.RestartPolicyOnFailure && failed == 0)):
			st.Phase = corev1.PodSucceeded
			if failed > 0 {
				st.Phase = corev1.PodFailed
			}
		case running > 0 || terminated > 0 || restarting > 0:
			st.Phase = corev1.PodRunning
		}
	}
	allReady := corev1.ConditionFalse
	if ready == n && n > 0 && !r.deleting {
		allReady = corev1.ConditionTrue
	}
	t := now()
	initCondition := corev1.ConditionTrue
	if !initialized {
		initCondition = corev1.ConditionFalse
	}
	st.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metaTime(r.started)},
		{Type: corev1.PodInitialized, Status: initCondition, LastTransitionTime: t},
		{Type: corev1.ContainersReady, Status: allReady, LastTransitionTime: t},
		{Type: corev1.PodReady, Status: allReady, LastTransitionTime: t},
	}
	r.keepTransitionTimes(st.Conditions)
	r.conditions = st.Conditions
	return st
}

// initStatusLocked adds the init containers' statuses to st, and tells
// whether they all succeeded, and whether one failed for good.
func (r *podRun) initStatusLocked(st *corev1.PodStatus) (initialized, failed bool) {
	initialized = true
	for _, c := range r.inits {
		s := c.status
		s.Name, s.Image = c.spec.Name, c.spec.Image
		st.InitContainerStatuses = append(st.InitContainerStatuses, s)
		t := s.State.Terminated
		if t == nil || t.ExitCode != 0 {
			initialized = false
		}
		if t != nil && t.ExitCode != 0 && c.policy == corev1.RestartPolicyNever {
			failed = true
		}
	}
	return initialized, failed
}

// keepTransitionTimes keeps the last transition time of the conditions
// whose status did not change since the last report.
func (r *podRun) keepTransitionTimes(conds []corev1.PodCondition) {
	for i := range conds {
		for _, old := range r.conditions {
			if old.Type == conds[i].Type && old.Status == conds[i].Status && !old.LastTransitionTime.IsZero() {
				conds[i].LastTransitionTime = old.LastTransitionTime
			}
		}
	}
}

func metaTime(t time.Time) metav1.Time { return metav1.NewTime(t) }
