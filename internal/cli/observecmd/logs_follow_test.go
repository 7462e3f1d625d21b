package observecmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
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

// followFixture follows integration orders in namespace apps through client-go's fake
// clientset, which serves each container's log as "CONTAINER tail=N", N the --tail asked
// (-1 for all). Its log requests name no pod, so each pod has its own container.
type followFixture struct {
	pods        *fake.Clientset
	out, errOut syncBuffer
	done        chan error
	cancel      context.CancelFunc
}

func newFollowFixture(t *testing.T, tail int64, pods ...runtime.Object) *followFixture {
	f := &followFixture{pods: fake.NewClientset(pods...), done: make(chan error, 1)}
	f.pods.PrependReactor("get", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		opts, ok := action.(k8stesting.GenericActionImpl).Value.(*corev1.PodLogOptions)
		if action.GetSubresource() != "log" || !ok {
			return false, nil, nil
		}
		lines := int64(-1)
		if opts.TailLines != nil {
			lines = *opts.TailLines
		}
		return true, &runtime.Unknown{Raw: fmt.Appendf(nil, "%s tail=%d\n", opts.Container, lines)}, nil
	})
	o := &LogsOptions{Cluster: cmdutil.Cluster{Namespace: "apps", Pods: f.pods}, Name: "orders", Follow: true, Tail: tail,
		IOStreams: genericiooptions.IOStreams{Out: &f.out, ErrOut: &f.errOut}}
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	t.Cleanup(cancel)
	go func() { f.done <- o.Run(ctx) }()
	return f
}

// followedPod is a pod of integration orders whose container, named after the pod, runs
// (restarts times restarted) since started, or is created when started is zero.
func followedPod(name string, restarts int32, started time.Time) *corev1.Pod {
	cs := corev1.ContainerStatus{Name: name, RestartCount: restarts,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
	phase := corev1.PodPending
	if !started.IsZero() {
		phase = corev1.PodRunning
		cs.ContainerID = fmt.Sprintf("caravan://%s/%d", name, restarts)
		cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, UID: types.UID(name),
			Labels: map[string]string{camelv1.IntegrationLabel: "orders"}},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: name}}},
		Status: corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{cs}},
	}
}

func TestFollowPicksUpNewPodsAndRestartsFromTheWatchWithoutListingAgain(t *testing.T) {
	g := NewWithT(t)
	t0 := time.Unix(100, 0)
	f := newFollowFixture(t, 2, followedPod("orders-1", 0, t0))
	g.Eventually(f.out.String, 10*time.Second, 10*time.Millisecond).Should(Equal("orders-1 tail=2\n"), "the run present at the start, with --tail")
	// Polling would list the pods again to find new ones: a list now fails the command.
	f.pods.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("the pods were listed again")
	})
	ctx := context.Background()
	pods := f.pods.CoreV1().Pods("apps")
	_, err := pods.Create(ctx, followedPod("orders-2", 0, time.Time{}), metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = pods.UpdateStatus(ctx, followedPod("orders-2", 0, t0), metav1.UpdateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(f.out.String, 10*time.Second, 10*time.Millisecond).Should(HaveSuffix("[orders-2] orders-2 tail=-1\n"), "a new pod prints whole")
	_, err = pods.UpdateStatus(ctx, followedPod("orders-1", 1, t0.Add(time.Minute)), metav1.UpdateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(f.out.String, 10*time.Second, 10*time.Millisecond).Should(HaveSuffix("[orders-1] orders-1 tail=-1\n"), "the run after a restart")
	g.Eventually(f.errOut.String, 10*time.Second, 10*time.Millisecond).Should(Equal("pod orders-1: container orders-1 restarted (restart 1)\n"))
	f.cancel()
	g.Eventually(f.done, 10*time.Second).Should(Receive(BeNil()))
	g.Expect(f.out.String()).To(Equal("orders-1 tail=2\n[orders-2] orders-2 tail=-1\n[orders-1] orders-1 tail=-1\n"), "each run once")
}

func TestFollowWaitsForTheFirstPod(t *testing.T) {
	g := NewWithT(t)
	f := newFollowFixture(t, 5)
	g.Eventually(f.errOut.String, 10*time.Second, 10*time.Millisecond).Should(Equal("waiting for a pod of integration orders in namespace apps to start\n"))
	_, err := f.pods.CoreV1().Pods("apps").Create(context.Background(), followedPod("orders-1", 0, time.Unix(100, 0)), metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(f.out.String, 10*time.Second, 10*time.Millisecond).Should(Equal("orders-1 tail=-1\n"), "a pod that starts later prints whole")
	f.cancel()
	g.Eventually(f.done, 10*time.Second).Should(Receive(BeNil()))
}

func TestFollowFailsAtOnceWhenThePodsCannotBeListed(t *testing.T) {
	pods := fake.NewClientset()
	pods.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(corev1.Resource("pods"), "", errors.New("no rights"))
	})
	o := &LogsOptions{Cluster: cmdutil.Cluster{Namespace: "apps", Pods: pods}, Name: "orders", Follow: true, Tail: -1,
		IOStreams: genericiooptions.NewTestIOStreamsDiscard()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := o.Run(ctx); err == nil || !strings.Contains(err.Error(), `listing the pods of integration "orders"`) || ctx.Err() != nil {
		t.Errorf("got %v, want the list's error before the timeout", err)
	}
}
