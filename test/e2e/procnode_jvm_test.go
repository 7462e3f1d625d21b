package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// jvmCheck is a shell script that needs what a JVM and Maven need of the
// process node: /dev's devices, a writable /tmp, the host's resolver.
const jvmCheck = `java -version && test -c /dev/urandom && head -c 16 /dev/urandom >/dev/null && ` +
	`test "$(stat -c %a /tmp)" = 1777 && touch /tmp/ok && test -w /dev/shm && cat /etc/resolv.conf >/dev/null && mvn -v`

// TestBuilderPodsRunJVMsOnTheProcessNode: pods labelled as builders go to
// the process node and run the builder image's java and mvn, with /dev,
// /tmp and /etc/resolv.conf as a kubelet's containers have them; their
// termination message comes from the file or, on failure, from the log.
func TestBuilderPodsRunJVMsOnTheProcessNode(t *testing.T) {
	ns := env.Namespace(t)
	image := env.Cluster.RegistryAddress + "/" + runtime.BuilderImage.Repository

	t.Run("a JVM and Maven run and the message comes from the termination log", func(t *testing.T) {
		t.Parallel()
		g := NewWithT(t)
		pod := runBuilderPod(t, ns, "jvm", image, jvmCheck+` && echo built > /dev/termination-log`, nil)
		g.Expect(pod.Spec.NodeName).To(Equal(env.Cluster.PodNodeName()))
		g.Expect(pod.Status.Phase).To(Equal(corev1.PodSucceeded), builderLog(t, pod))
		term := terminated(pod)
		g.Expect(term).NotTo(BeNil())
		g.Expect(term.ExitCode).To(BeZero())
		g.Expect(strings.TrimSuffix(term.Message, "\n")).To(Equal("built"))
		g.Expect(builderLog(t, pod)).To(ContainSubstring("Apache Maven"))
	})

	t.Run("a failure's message comes from the log with FallbackToLogsOnError", func(t *testing.T) {
		t.Parallel()
		g := NewWithT(t)
		pod := runBuilderPod(t, ns, "fallback", image, `echo noise; echo MARKER-b2f1; exit 3`, func(p *corev1.Pod) {
			p.Spec.Containers[0].TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
		})
		g.Expect(pod.Status.Phase).To(Equal(corev1.PodFailed), builderLog(t, pod))
		term := terminated(pod)
		g.Expect(term).NotTo(BeNil())
		g.Expect(term.ExitCode).To(BeEquivalentTo(3))
		g.Expect(term.Message).To(ContainSubstring("MARKER-b2f1"))
	})

	t.Run("a read-only root filesystem is read-only in /tmp too, as on a kubelet, unless a volume is mounted there", func(t *testing.T) {
		t.Parallel()
		g := NewWithT(t)
		readOnly := func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr.To(true)}
		}
		pod := runBuilderPod(t, ns, "read-only", image, `java -version && ! touch /etc/written 2>/dev/null && ! touch /tmp/written 2>/dev/null`, readOnly)
		g.Expect(pod.Status.Phase).To(Equal(corev1.PodSucceeded), builderLog(t, pod))
		pod = runBuilderPod(t, ns, "read-only-tmp", image, `java -version && ! touch /etc/written 2>/dev/null && touch /tmp/ok`, func(p *corev1.Pod) {
			readOnly(p)
			p.Spec.Volumes = []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}}
		})
		g.Expect(pod.Status.Phase).To(Equal(corev1.PodSucceeded), builderLog(t, pod))
	})
}

// runBuilderPod runs script in a pod of image labelled as a builder, never
// restarted, and returns it once it has ended.
func runBuilderPod(t *testing.T, ns, name, image, script string, mutate func(*corev1.Pod)) *corev1.Pod {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels: map[string]string{localcluster.ProcessPodLabel: "caravan-builder"}},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{Name: "build", Image: image,
				Command: []string{"sh", "-c", script},
				// A JVM sizes itself from the machine unless told.
				Env: []corev1.EnvVar{{Name: "JAVA_TOOL_OPTIONS", Value: "-Xmx64m -XX:ActiveProcessorCount=1 -XX:+UseSerialGC"}},
			}},
		},
	}
	if mutate != nil {
		mutate(pod)
	}
	// The namespace's default ServiceAccount, which admission requires, comes shortly after it.
	g.Eventually(func() error { return env.Client.Create(ctx, pod) }, timeout, 250*time.Millisecond).Should(Succeed())
	g.Eventually(func() (corev1.PodPhase, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)
		return pod.Status.Phase, err
	}, 3*time.Minute, 250*time.Millisecond).Should(BeElementOf(corev1.PodSucceeded, corev1.PodFailed),
		"pod %s: %+v", name, pod.Status.ContainerStatuses)
	return pod
}

// terminated is the terminated state of the pod's first container, if any.
func terminated(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	if len(pod.Status.ContainerStatuses) == 0 {
		return nil
	}
	return pod.Status.ContainerStatuses[0].State.Terminated
}

// builderLog is the log of the pod's container, or why it cannot be read.
func builderLog(t *testing.T, pod *corev1.Pod) string {
	t.Helper()
	out, err := kubectl(t, "logs", "-n", pod.Namespace, pod.Name)
	if err != nil {
		return "reading the log: " + err.Error() + ": " + out
	}
	return out
}
