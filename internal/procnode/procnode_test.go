package procnode

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestExpandReplacesDefinedVariablesAsKubernetesDoes(t *testing.T) {
	vars := map[string]string{"POD_IP": "127.0.1.2", "EMPTY": ""}
	for in, want := range map[string]string{
		"--bind=$(POD_IP):8080": "--bind=127.0.1.2:8080",
		"$(UNDEFINED)":          "$(UNDEFINED)",
		"$$(POD_IP)":            "$(POD_IP)",
		"a$(EMPTY)b":            "ab",
		"cost $5":               "cost $5",
		"unclosed $(POD_IP":     "unclosed $(POD_IP",
	} {
		if got := expand(in, vars); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTheCommandLineFollowsThePodThenTheImage(t *testing.T) {
	g := NewWithT(t)
	env := []string{"X=1"}
	entry, cmd := []string{"/caravan"}, []string{"operator"}
	g.Expect(commandLine(&corev1.Container{}, entry, cmd, env)).To(Equal([]string{"/caravan", "operator"}))
	g.Expect(commandLine(&corev1.Container{Args: []string{"operator", "--x=$(X)"}}, entry, cmd, env)).
		To(Equal([]string{"/caravan", "operator", "--x=1"}))
	g.Expect(commandLine(&corev1.Container{Command: []string{"/bin/sh"}, Args: []string{"-c"}}, entry, cmd, env)).
		To(Equal([]string{"/bin/sh", "-c"}))
}

func TestTheUserComesFromTheSecurityContextThenTheImage(t *testing.T) {
	g := NewWithT(t)
	root := t.TempDir()
	g.Expect(os.MkdirAll(filepath.Join(root, "etc"), 0o755)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(root, "etc", "passwd"), []byte("nonroot:x:65532:65533::/home:/bin/false\n"), 0o644)).To(Succeed())
	pod := &corev1.Pod{}
	uid, gid, err := containerUser(pod, &corev1.Container{}, "nonroot", root)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect([]int{uid, gid}).To(Equal([]int{65532, 65533}))

	uid, gid, err = containerUser(pod, &corev1.Container{SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000)}}, "65532:65532", root)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect([]int{uid, gid}).To(Equal([]int{1000, 65532}))

	nonRoot := &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}}}
	_, _, err = containerUser(nonRoot, &corev1.Container{}, "", root)
	g.Expect(err).To(MatchError(ContainSubstring("runAsNonRoot")))
	_, _, err = containerUser(pod, &corev1.Container{}, "nobody", root)
	g.Expect(err).To(MatchError(ContainSubstring(`image user "nobody" is not in the image's /etc/passwd`)))
}

func TestTheDownwardAPIGivesThePodsFieldsAndResources(t *testing.T) {
	g := NewWithT(t)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"a": "b"}},
		Spec: corev1.PodSpec{NodeName: "n", ServiceAccountName: "sa"}, Status: corev1.PodStatus{PodIP: "127.0.1.9"}}
	for path, want := range map[string]string{"metadata.name": "p", "metadata.namespace": "ns", "spec.nodeName": "n",
		"spec.serviceAccountName": "sa", "status.podIP": "127.0.1.9", "metadata.labels['a']": "b", "metadata.labels": `a="b"`} {
		got, err := fieldValue(pod, path)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(want), path)
	}
	_, err := fieldValue(pod, "spec.unknown")
	g.Expect(err).To(MatchError(ContainSubstring("unsupported downward API field")))

	c := &corev1.Container{Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
		corev1.ResourceMemory: resource.MustParse("512Mi"), corev1.ResourceCPU: resource.MustParse("1500m")}}}
	node := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("16Gi")}
	mem, err := resourceValue(c, &corev1.ResourceFieldSelector{Resource: "limits.memory"}, node)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(mem).To(Equal("536870912"))
	cpu, err := resourceValue(c, &corev1.ResourceFieldSelector{Resource: "limits.cpu"}, node)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cpu).To(Equal("2"), "CPU is rounded up to whole cores")

	unlimited := &corev1.Container{}
	cpu, err = resourceValue(unlimited, &corev1.ResourceFieldSelector{Resource: "limits.cpu"}, node)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cpu).To(Equal("8"), "a CPU limit the container does not set is the node's allocatable")
	mem, err = resourceValue(unlimited, &corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}, node)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(mem).To(Equal("16384"), "a memory limit the container does not set is the node's allocatable")
	req, err := resourceValue(unlimited, &corev1.ResourceFieldSelector{Resource: "requests.cpu"}, node)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(req).To(Equal("0"), "a request the container does not set is 0")
}

func TestAnImageEntryThatLeavesTheRootIsRefused(t *testing.T) {
	g := NewWithT(t)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	g.Expect(tw.WriteHeader(&tar.Header{Name: "ok", Typeflag: tar.TypeReg, Mode: 0o644, Size: 2})).To(Succeed())
	_, _ = tw.Write([]byte("ok"))
	g.Expect(tw.WriteHeader(&tar.Header{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "../../etc/passwd"})).To(Succeed())
	g.Expect(tw.Close()).To(Succeed())
	root := t.TempDir()
	g.Expect(untar(tar.NewReader(&buf), root)).To(Succeed())
	g.Expect(filepath.Join(root, "ok")).To(BeARegularFile())

	// "../" in a name is cleaned into the root, never above it.
	buf.Reset()
	tw = tar.NewWriter(&buf)
	g.Expect(tw.WriteHeader(&tar.Header{Name: "../../escaped", Typeflag: tar.TypeReg, Mode: 0o644})).To(Succeed())
	g.Expect(tw.Close()).To(Succeed())
	g.Expect(untar(tar.NewReader(&buf), root)).To(Succeed())
	g.Expect(filepath.Join(root, "escaped")).To(BeARegularFile())
	g.Expect(filepath.Join(filepath.Dir(filepath.Dir(root)), "escaped")).NotTo(BeAnExistingFile())
}

func TestRestartsFollowTheRestartPolicy(t *testing.T) {
	g := NewWithT(t)
	g.Expect(restarts(corev1.RestartPolicyAlways, 0, nil)).To(BeTrue())
	g.Expect(restarts(corev1.RestartPolicyOnFailure, 0, nil)).To(BeFalse())
	g.Expect(restarts(corev1.RestartPolicyOnFailure, 1, nil)).To(BeTrue())
	g.Expect(restarts(corev1.RestartPolicyNever, 1, nil)).To(BeFalse())
}

func TestThePodStatusFollowsItsContainers(t *testing.T) {
	g := NewWithT(t)
	r := &podRun{ip: "127.0.1.3", pod: &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}}}
	c := &container{pod: r, spec: corev1.Container{Name: "c", Image: "img"}}
	r.containers = []*container{c}
	c.status.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
	st := r.statusLocked()
	g.Expect(st.Phase).To(Equal(corev1.PodPending))
	g.Expect(st.PodIP).To(Equal("127.0.1.3"))

	c.status.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	c.status.Ready = true
	st = r.statusLocked()
	g.Expect(st.Phase).To(Equal(corev1.PodRunning))
	g.Expect(st.Conditions).To(ContainElement(And(HaveField("Type", corev1.PodReady), HaveField("Status", corev1.ConditionTrue))))

	c.status.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3}}
	c.status.Ready = false
	st = r.statusLocked()
	g.Expect(st.Phase).To(Equal(corev1.PodFailed))
	g.Expect(st.ContainerStatuses[0].State.Terminated.ExitCode).To(Equal(int32(3)))
}

func TestAnInitContainerHoldsThePodPendingAndItsFailureFailsIt(t *testing.T) {
	g := NewWithT(t)
	r := &podRun{ip: "127.0.1.4", pod: &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}}}
	init := &container{pod: r, spec: corev1.Container{Name: "maven", Image: "builder"}, policy: corev1.RestartPolicyNever}
	c := &container{pod: r, spec: corev1.Container{Name: "publish", Image: "operator"}, policy: corev1.RestartPolicyNever}
	r.inits, r.containers = []*container{init}, []*container{c}
	init.status.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	c.status.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
	st := r.statusLocked()
	g.Expect(st.Phase).To(Equal(corev1.PodPending))
	g.Expect(st.InitContainerStatuses).To(HaveLen(1))
	g.Expect(st.Conditions).To(ContainElement(And(HaveField("Type", corev1.PodInitialized), HaveField("Status", corev1.ConditionFalse))))

	t.Log("an init container that succeeded lets the containers run")
	init.status.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}
	c.status.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	st = r.statusLocked()
	g.Expect(st.Phase).To(Equal(corev1.PodRunning))
	g.Expect(st.Conditions).To(ContainElement(And(HaveField("Type", corev1.PodInitialized), HaveField("Status", corev1.ConditionTrue))))

	t.Log("one that failed, never to restart, fails the pod")
	init.status.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: "maven failed"}}
	c.status.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
	st = r.statusLocked()
	g.Expect(st.Phase).To(Equal(corev1.PodFailed))
	g.Expect(st.InitContainerStatuses[0].State.Terminated.Message).To(Equal("maven failed"))

	t.Log("with another restart policy it is retried, and the pod stays pending")
	init.policy = corev1.RestartPolicyOnFailure
	g.Expect(r.statusLocked().Phase).To(Equal(corev1.PodPending))
}

func TestAPodWhoseContainerWaitsToRestartIsRunning(t *testing.T) {
	g := NewWithT(t)
	r := &podRun{pod: &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways}}}
	c := &container{pod: r, spec: corev1.Container{Name: "c", Image: "img"}}
	r.containers = []*container{c}
	c.status.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
	g.Expect(r.statusLocked().Phase).To(Equal(corev1.PodPending), "a container that never ran")
	c.status.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	c.status.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}
	g.Expect(r.statusLocked().Phase).To(Equal(corev1.PodRunning), "a kubelet keeps a crash-looping pod Running")
}
