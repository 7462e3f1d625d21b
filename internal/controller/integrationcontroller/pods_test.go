package integrationcontroller

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// camelFailure is the end of the log of a camel-main that could not start a route.
const camelFailure = `2026-12-03 INFO  Apache Camel 4.18.0 (camel-1) is starting
2026-12-03 ERROR Failed: Failed to create route route1 at: >>> To[nosuch:thing] <<<
Exception in thread "main" org.apache.camel.FailedToCreateRouteException: Failed to create route: route1 at: >>> to[nosuch:thing] <<< in route: Route(route1)[From[timer:crash] -> [to[nosuch:thing]]] because: No endpoint could be found for: nosuch://thing, please check your classpath contains the needed Camel component jar.
	at org.apache.camel.reifier.RouteReifier.doCreateRoute(RouteReifier.java:236)
	at org.apache.camel.main.Main.main(Main.java:69)
Caused by: org.apache.camel.NoSuchEndpointException: No endpoint could be found for: nosuch://thing, please check your classpath contains the needed Camel component jar.
	at org.apache.camel.impl.engine.AbstractCamelContext.doGetEndpoint(AbstractCamelContext.java:879)
	... 30 more
`

func pod(name string, created time.Time, statuses ...corev1.ContainerStatus) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "integration", Image: "kit:1"}}},
		Status: corev1.PodStatus{ContainerStatuses: statuses}}
}

// current is the Deployment whose template runs kit:1.
var current = &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{
	Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "integration", Image: "kit:1"}}}}}}

func TestPodFailureTellsWhyAnIntegrationsPodsFail(t *testing.T) {
	now := time.Now()
	crashed := corev1.ContainerStatus{Name: "integration", RestartCount: 2,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: camelFailure}}}
	running := corev1.ContainerStatus{Name: "integration", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}

	t.Run("a crash loop: the exit code, the restarts and the log's messages without stack frames", func(t *testing.T) {
		g := NewWithT(t)
		f := podFailure([]corev1.Pod{pod("it-1", now, crashed)}, current)
		g.Expect(f).NotTo(BeNil())
		g.Expect(f.Reason).To(Equal(ReasonCrashing))
		g.Expect(f.Message).To(HavePrefix("pod it-1: container integration exited with code 1 and was restarted 2 times; the end of its log:\n"))
		g.Expect(f.Message).To(ContainSubstring("Caused by: org.apache.camel.NoSuchEndpointException: No endpoint could be found for: nosuch://thing"))
		g.Expect(f.Message).To(ContainSubstring("FailedToCreateRouteException"))
		g.Expect(f.Message).NotTo(ContainSubstring("\tat "))
		g.Expect(f.Message).NotTo(ContainSubstring("30 more"))
	})
	t.Run("the first failure, before a restart, fails too", func(t *testing.T) {
		g := NewWithT(t)
		first := corev1.ContainerStatus{Name: "integration",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137}}}
		f := podFailure([]corev1.Pod{pod("it-1", now, first)}, current)
		g.Expect(f).NotTo(BeNil())
		g.Expect(f.Message).To(Equal("pod it-1: container integration exited with code 137; its log: kubectl logs --previous it-1 -c integration"))
	})
	t.Run("a container killed for its memory limit says so, with the limit and what to change", func(t *testing.T) {
		g := NewWithT(t)
		killed := corev1.ContainerStatus{Name: "integration", RestartCount: 1,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}
		p := pod("it-1", now, killed)
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}
		f := podFailure([]corev1.Pod{p}, current)
		g.Expect(f).NotTo(BeNil())
		g.Expect(f.Reason).To(Equal(ReasonOutOfMemory))
		g.Expect(f.Message).To(Equal("pod it-1: container integration was killed for using more memory than its limit of 128Mi (OOMKilled)" +
			" and was restarted once; raise the limit (-t container.limitMemory=...) or lower the JVM's (-t jvm.options=-Xmx...);" +
			" its log: kubectl logs --previous it-1 -c integration"))
	})
	t.Run("a container the kubelet cannot start", func(t *testing.T) {
		g := NewWithT(t)
		pull := corev1.ContainerStatus{Name: "integration", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason: "ImagePullBackOff", Message: `Back-off pulling image "registry.example/nope:1"`}}}
		f := podFailure([]corev1.Pod{pod("it-1", now, pull)}, current)
		g.Expect(f).NotTo(BeNil())
		g.Expect(f.Reason).To(Equal(ReasonPodNotStarting))
		g.Expect(f.Message).To(Equal(`pod it-1: container integration cannot start: ImagePullBackOff: Back-off pulling image "registry.example/nope:1"`))
	})
	t.Run("no failure: starting, running, ready again after a crash, completed, or being deleted", func(t *testing.T) {
		g := NewWithT(t)
		recovered := crashed
		recovered.State, recovered.Ready = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, true
		creating := corev1.ContainerStatus{Name: "integration", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
		completed := corev1.ContainerStatus{Name: "integration", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}}
		deleted := pod("it-old", now, crashed)
		deleted.DeletionTimestamp = &metav1.Time{Time: now}
		g.Expect(podFailure([]corev1.Pod{pod("a", now, running), pod("b", now, recovered), pod("c", now, creating),
			pod("d", now, completed), deleted}, current)).To(BeNil())
		g.Expect(podFailure(nil, current)).To(BeNil())
	})
	t.Run("the newest failing pod is the one told", func(t *testing.T) {
		g := NewWithT(t)
		f := podFailure([]corev1.Pod{pod("old", now.Add(-time.Minute), crashed), pod("new", now, crashed), pod("ok", now.Add(time.Minute), running)}, current)
		g.Expect(f.Message).To(HavePrefix("pod new: "))
	})
	t.Run("a crashing pod of another image, an older template's, is not this one's failure", func(t *testing.T) {
		g := NewWithT(t)
		old := pod("old-image", now.Add(time.Minute), crashed)
		old.Spec.Containers[0].Image = "nojava:1"
		g.Expect(podFailure([]corev1.Pod{old, pod("ok", now, running)}, current)).To(BeNil())
	})
	t.Run("a long log keeps its last lines", func(t *testing.T) {
		g := NewWithT(t)
		var b strings.Builder
		for i := range 40 {
			b.WriteString(strings.Repeat("x", i%3+1) + "\n")
		}
		b.WriteString("the last line\n")
		tail := strings.Split(logTail(b.String()), "\n")
		g.Expect(tail).To(HaveLen(logLinesKept))
		g.Expect(tail[len(tail)-1]).To(Equal("the last line"))
	})
	t.Run("the first line of an excerpt the kubelet cut is left out", func(t *testing.T) {
		g := NewWithT(t)
		exception := `Exception in thread "main" org.apache.camel.FailedToCreateRouteException: Failed to create route: route1 because: No endpoint could be found for: timr://tick`
		cause := "Caused by: org.apache.camel.NoSuchEndpointException: No endpoint could be found for: timr://tick\n"
		frames := strings.Repeat("\tat org.example.Frame.call(Frame.java:1)\n", 47)
		log := "[main] INFO starting\n" + exception + "\n" + cause + frames
		excerpt := log[len(log)-kubeletLogExcerptBytes:]
		first, _, _ := strings.Cut(excerpt, "\n")
		g.Expect(exception).To(HaveSuffix(first), "the kubelet's cut falls within the exception's line")
		g.Expect(len(first)).To(BeNumerically("<", len(exception)), "the kubelet's cut falls within the exception's line")
		g.Expect(logTail(excerpt)).To(Equal(strings.TrimSuffix(cause, "\n")))
		whole := "the first line\nthe second line\n"
		g.Expect(logTail(whole)).To(Equal("the first line\nthe second line"), "an excerpt under the limit is the whole log")
	})
}

func TestLastProgressIsTheRolloutsLastProgress(t *testing.T) {
	g := NewWithT(t)
	made, progressed := time.Now().Add(-time.Hour), time.Now().Add(-time.Minute)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(made)}}
	g.Expect(lastProgress(d)).To(BeTemporally("==", made))
	d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, LastUpdateTime: metav1.NewTime(time.Now())},
		{Type: appsv1.DeploymentProgressing, LastUpdateTime: metav1.NewTime(progressed)}}
	g.Expect(lastProgress(d)).To(BeTemporally("==", progressed))
}
