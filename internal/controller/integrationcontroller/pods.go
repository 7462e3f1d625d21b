package integrationcontroller

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/controller"
)

// +kubebuilder:rbac:groups="",resources=pods,verbs=list
// +kubebuilder:rbac:groups="",resources=events,verbs=list

// podsCheckAfter is how long a rollout may go without progress before its pods are read for a
// failure; podsRecheck is how often they are read again while it is not ready. Pods have no watch
// here: a cache of every integration pod would cost each operator memory at every scale, while a
// read only happens for a Deployment that is stuck.
const (
	podsCheckAfter = 10 * time.Second
	podsRecheck    = 20 * time.Second
)

// notStarting are the waiting reasons of a container the kubelet cannot start.
var notStarting = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true,
}

// logLinesKept is how many lines of a crashed container's log end up in the condition.
const logLinesKept = 12

// kubeletLogExcerptBytes is the longest log excerpt a kubelet makes a termination message of
// (FallbackToLogsOnError). An excerpt that long was cut from the end of the log, most likely within
// a line.
const kubeletLogExcerptBytes = 2048

// reconcilePods reads the pods of a Deployment whose rollout has stalled, and fails the integration
// when a container crashes or cannot start. The container's reason and the end of its log, which
// the runtime container leaves as its termination message, become the Ready condition's message.
// Else a running pod whose runtime answers that its readiness checks fail makes it RuntimeNotReady,
// naming the checks.
func (r *Reconciler) reconcilePods(ctx context.Context, s *scope) (reconcile.Result, error) {
	d := s.deployment
	if d == nil {
		return reconcile.Result{}, nil
	}
	if ready, _ := deploymentReady(d); ready {
		return reconcile.Result{}, nil
	}
	if d.Status.ObservedGeneration < d.Generation {
		// The Deployment controller has not seen the latest template yet: its pods tell of an older one.
		return reconcile.Result{RequeueAfter: podsCheckAfter}, nil
	}
	if wait := podsCheckAfter - r.Clock.Since(lastProgress(d)); wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	pods := &corev1.PodList{}
	// Served from the API server's watch cache, as a cached read would be.
	err := r.APIReader.List(ctx, pods, client.InNamespace(s.it.Namespace),
		client.MatchingLabels{camelv1.IntegrationLabel: s.it.Name}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: "0"}})
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("reading the pods of integration %s: %w", s.it.Name, err)
	}
	s.Failure = podFailure(pods.Items, d)
	if s.Failure == nil {
		read := r.Health
		if read == nil {
			read = readHealth
		}
		s.Failure = runtimeNotReady(ctx, read, pods.Items, s.traits.Container.Name())
	}
	if s.Failure == nil {
		if s.unmounted, err = r.mountFailure(ctx, pods.Items, d); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{RequeueAfter: podsRecheck}, nil
}

// mountFailure tells why the kubelet cannot mount the volumes of the newest pending pod of d,
// as its latest FailedMount event says (a ConfigMap or Secret it mounts that does not exist, for
// one); nil when no pod waits on its volumes.
func (r *Reconciler) mountFailure(ctx context.Context, pods []corev1.Pod, d *appsv1.Deployment) (*controller.Condition, error) {
	var pending *corev1.Pod
	for i, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodPending && sameImages(p.Spec.Containers, d.Spec.Template.Spec.Containers) &&
			(pending == nil || p.CreationTimestamp.After(pending.CreationTimestamp.Time)) {
			pending = &pods[i]
		}
	}
	if pending == nil {
		return nil, nil
	}
	events := &corev1.EventList{}
	if err := r.APIReader.List(ctx, events, client.InNamespace(pending.Namespace),
		client.MatchingFields{"involvedObject.uid": string(pending.UID), "reason": "FailedMount"}); err != nil {
		return nil, fmt.Errorf("reading the events of pod %s: %w", pending.Name, err)
	}
	var latest *corev1.Event
	for i, e := range events.Items {
		if latest == nil || eventTime(e).After(eventTime(*latest)) {
			latest = &events.Items[i]
		}
	}
	if latest == nil {
		return nil, nil
	}
	return controller.Because(ReasonVolumesNotMounted, fmt.Sprintf("pod %s waits for its volumes: %s (since %s)",
		pending.Name, latest.Message, pending.CreationTimestamp.UTC().Format(time.RFC3339))), nil
}

// eventTime is when an event was last seen.
func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// lastProgress is when the Deployment's rollout last made progress, as its Progressing condition
// says, or else when it was made.
func lastProgress(d *appsv1.Deployment) time.Time {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && !c.LastUpdateTime.IsZero() {
			return c.LastUpdateTime.Time
		}
	}
	return d.CreationTimestamp.Time
}

// podFailure is the failure of the newest pod of d's template with a container that crashed or
// cannot start, nil when none has. A container that is ready again is not failing, and a pod of an
// older template (another image: a rollout or a move going back) tells nothing of this one.
func podFailure(pods []corev1.Pod, d *appsv1.Deployment) *controller.Condition {
	pods = slices.Clone(pods)
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return b.CreationTimestamp.Compare(a.CreationTimestamp.Time) })
	for _, p := range pods {
		if p.DeletionTimestamp != nil || !sameImages(p.Spec.Containers, d.Spec.Template.Spec.Containers) {
			continue
		}
		for _, cs := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
			if f := containerFailure(&p, cs); f != nil {
				return f
			}
		}
	}
	return nil
}

// sameImages tells whether a pod's containers run the images of a template's.
func sameImages(pod, template []corev1.Container) bool {
	return slices.EqualFunc(pod, template, func(a, b corev1.Container) bool { return a.Name == b.Name && a.Image == b.Image })
}

// containerFailure tells why container cs of pod p fails, nil when it does not.
func containerFailure(p *corev1.Pod, cs corev1.ContainerStatus) *controller.Condition {
	if cs.Ready {
		return nil
	}
	if w := cs.State.Waiting; w != nil && notStarting[w.Reason] {
		return controller.Because(ReasonPodNotStarting,
			fmt.Sprintf("pod %s: container %s cannot start: %s: %s", p.Name, cs.Name, w.Reason, w.Message))
	}
	t := cs.State.Terminated
	if t == nil {
		t = cs.LastTerminationState.Terminated
	}
	if t == nil || t.ExitCode == 0 {
		return nil
	}
	reason, msg := ReasonCrashing, fmt.Sprintf("pod %s: container %s exited with code %d", p.Name, cs.Name, t.ExitCode)
	if t.Reason == oomKilled {
		reason, msg = ReasonOutOfMemory, fmt.Sprintf("pod %s: container %s was killed for using more memory than its limit%s (%s)",
			p.Name, cs.Name, memoryLimit(p, cs.Name), oomKilled)
	}
	switch {
	case cs.RestartCount == 1:
		msg += " and was restarted once"
	case cs.RestartCount > 1:
		msg += fmt.Sprintf(" and was restarted %d times", cs.RestartCount)
	}
	if reason == ReasonOutOfMemory {
		msg += "; raise the limit (-t container.limitMemory=...) or lower the JVM's (-t jvm.options=-Xmx...)"
	}
	if tail := logTail(t.Message); tail != "" {
		msg += "; the end of its log:\n" + tail
	} else {
		msg += fmt.Sprintf("; its log: kubectl logs --previous %s -c %s", p.Name, cs.Name)
	}
	return controller.Because(reason, msg)
}

// oomKilled is the reason a kubelet gives a container the kernel killed for its memory limit.
const oomKilled = "OOMKilled"

// memoryLimit is " of " the memory limit of container name of p, or "" when it has none.
func memoryLimit(p *corev1.Pod, name string) string {
	for _, c := range p.Spec.Containers {
		if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok && c.Name == name {
			return " of " + q.String()
		}
	}
	return ""
}

// stackFrame matches the lines of a Java stack trace that name a frame or elided frames.
var stackFrame = regexp.MustCompile(`^\s+(at |\.\.\. \d+ more)`)

// logTail keeps the last lines of a log excerpt, without stack frames: what is left are the log's
// messages and the exceptions with their causes, which say what went wrong. The first line of an
// excerpt the kubelet cut is left out, as it is most likely the end of a longer line.
func logTail(excerpt string) string {
	if len(excerpt) == kubeletLogExcerptBytes {
		if _, rest, cut := strings.Cut(excerpt, "\n"); cut {
			excerpt = rest
		}
	}
	var kept []string
	for _, line := range strings.Split(strings.TrimRight(excerpt, "\n"), "\n") {
		if strings.TrimSpace(line) != "" && !stackFrame.MatchString(line) {
			kept = append(kept, line)
		}
	}
	if len(kept) > logLinesKept {
		kept = kept[len(kept)-logLinesKept:]
	}
	return strings.Join(kept, "\n")
}
