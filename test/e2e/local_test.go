package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/caravan-dev/caravan/internal/debimage"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// caravan runs the built binary and returns its stdout, stderr and error.
func caravan(args ...string) (string, string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(env.Caravan, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

type recordedProcess struct {
	Name string `json:"name"`
	PID  int    `json:"pid"`
}

func recordedProcesses(t *testing.T, dir string) []recordedProcess {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		t.Fatalf("reading cluster state: %v", err)
	}
	var state struct {
		Processes []recordedProcess `json:"processes"`
	}
	if err := json.Unmarshal(data, &state); err != nil {
		t.Fatal(err)
	}
	return state.Processes
}

// running reports whether pid is a live process; a zombie has exited
// and only waits for its new parent to reap it.
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// processesMentioning lists the PIDs whose command line contains s.
func processesMentioning(s string) []int {
	return processesWhere("cmdline", func(cmdline []byte) bool { return bytes.Contains(cmdline, []byte(s)) })
}

// processesWhere lists the PIDs, but this one's, whose file under
// /proc/PID (cmdline, environ) matches.
func processesWhere(file string, match func([]byte) bool) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), file))
		if err == nil && match(data) && pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestLocalClusterRunsDeploymentsAndStopsCleanly(t *testing.T) {
	g := NewWithT(t)
	dir := filepath.Join(t.TempDir(), "local")
	t.Cleanup(func() { _, _, _ = caravan("local", "down", "--dir", dir) })

	// The process node: a machine runs one kubelet node, which test/node may hold.
	out, errOut, err := caravan("local", "up", "--dir", dir, "--nodes", "2", "--node", "process")
	g.Expect(err).NotTo(HaveOccurred(), "local up: %s\n%s", out, errOut)
	g.Expect(out).To(ContainSubstring("The local cluster is running"))
	g.Expect(errOut).To(ContainSubstring("the real pods run on the process node: asked for with --node process"))
	components := []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "process-node", "registry"}
	registry := regexp.MustCompile(`registry:\s+(127\.0\.0\.1:\d+)`).FindStringSubmatch(out)
	g.Expect(registry).To(HaveLen(2), "local up names no registry: %s", out)
	g.Expect(errOut).NotTo(ContainSubstring("goroutine "), "local up printed a stack trace")
	g.Expect(errOut).NotTo(ContainSubstring("log.SetLogger"), "local up printed controller-runtime's warning")
	started := recordedProcesses(t, dir)
	g.Expect(started).To(HaveLen(len(components)))

	t.Run("every component runs a binary built into the cache, or caravan itself", func(t *testing.T) {
		// A fresh machine has Go and nothing else: a component found
		// on the PATH (a registry from apt, say) would fail there.
		g := NewWithT(t)
		cacheDir, err := localcluster.DefaultCacheDir()
		g.Expect(err).NotTo(HaveOccurred())
		cacheDir, err = filepath.EvalSymlinks(cacheDir)
		g.Expect(err).NotTo(HaveOccurred())
		self, err := filepath.EvalSymlinks(env.Caravan)
		g.Expect(err).NotTo(HaveOccurred())
		for _, p := range started {
			exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", p.PID))
			g.Expect(err).NotTo(HaveOccurred(), "reading the executable of %s", p.Name)
			if p.Name == "registry" && os.Getenv(localcluster.RegistryBinaryEnv) != "" {
				continue // the user named a registry of their own
			}
			g.Expect(exe).To(Or(HavePrefix(cacheDir+string(filepath.Separator)), Equal(self)),
				"%s runs %s, which is neither in the cache %s nor caravan", p.Name, exe, cacheDir)
		}
	})

	out, _, err = caravan("local", "status", "--dir", dir)
	g.Expect(err).NotTo(HaveOccurred(), out)
	for _, name := range components {
		g.Expect(out).To(MatchRegexp(`(?m)^%s\s+\d+\s+running`, name))
	}

	out, _, err = caravan("local", "up", "--dir", dir)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainSubstring("already runs"))
	g.Expect(recordedProcesses(t, dir)).To(Equal(started), "a second up must not start a second cluster")

	kubeconfig, _, err := caravan("local", "kubeconfig", "--dir", dir)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.TrimSpace(kubeconfig)).To(Equal(filepath.Join(dir, "kubeconfig")))

	t.Run("the registry serves the Java base and builder images made from Debian's packages", func(t *testing.T) {
		g := NewWithT(t)
		for repo, pkg := range map[string]string{runtime.BaseImage.Repository: "openjdk-17-jre-headless:", runtime.BuilderImage.Repository: "maven:"} {
			ref, err := name.ParseReference(registry[1]+"/"+repo, name.Insecure)
			g.Expect(err).NotTo(HaveOccurred())
			img, err := remote.Image(ref)
			g.Expect(err).NotTo(HaveOccurred(), "reading %s", ref)
			cfg, err := img.ConfigFile()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cfg.Config.Labels[debimage.LabelPackages]).To(ContainSubstring(pkg), "the packages of %s", ref)
			g.Expect(cfg.Config.User).NotTo(BeElementOf("", "0", "root"), "%s runs as root", ref)
		}
	})
	t.Run("the API server reports its release version", func(t *testing.T) {
		g := NewWithT(t)
		out, errOut, err := caravan("local", "kubectl", "--dir", dir, "--", "version", "-o", "json")
		g.Expect(err).NotTo(HaveOccurred(), errOut)
		var v struct {
			Client struct{ GitVersion string } `json:"clientVersion"`
			Server struct{ GitVersion string } `json:"serverVersion"`
		}
		g.Expect(json.Unmarshal([]byte(out), &v)).To(Succeed(), out)
		g.Expect(v.Server.GitVersion).To(Equal(localcluster.KubernetesVersion))
		g.Expect(v.Client.GitVersion).To(Equal(localcluster.KubernetesVersion))
	})
	t.Run("a Deployment reaches ready pods on kwok nodes", func(t *testing.T) {
		t.Cleanup(func() {
			if t.Failed() {
				dumpPodsAndEvents(t, strings.TrimSpace(kubeconfig), filepath.Join(dir, "logs", "kwok.log"))
			}
		})
		deploymentBecomesReady(t, strings.TrimSpace(kubeconfig))
	})
	t.Run("a Camel K integration applies with kubectl", func(t *testing.T) {
		g := NewWithT(t)
		out, errOut, err := caravan("local", "kubectl", "--dir", dir, "--",
			"apply", "-n", "default", "-f", "../../config/samples/camel_v1_integration.yaml")
		g.Expect(err).NotTo(HaveOccurred(), errOut)
		g.Expect(out).To(ContainSubstring("integration.camel.apache.org/timer-to-log created"))
		out, _, err = caravan("local", "kubectl", "--dir", dir, "--", "get", "it", "-n", "default")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out).To(MatchRegexp(`timer-to-log\s+.*camel-k`))
	})

	out, errOut, err = caravan("local", "down", "--dir", dir)
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	g.Expect(out).To(ContainSubstring("Stopped the local cluster"))
	for _, p := range started {
		g.Expect(running(p.PID)).To(BeFalse(), "%s (pid %d) still runs after local down", p.Name, p.PID)
	}
	g.Expect(processesMentioning(dir)).To(BeEmpty(), "processes of the cluster still run after local down")
	g.Expect(dir).NotTo(BeADirectory())

	_, _, err = caravan("local", "status", "--dir", dir)
	g.Expect(err).To(HaveOccurred(), "status must fail when no cluster runs")
}

func deploymentBecomesReady(t *testing.T, kubeconfig string) {
	g := NewWithT(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	cs, err := kubernetes.NewForConfig(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	ctx := context.Background()
	labels := map[string]string{"app": "hello"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example/hello:1"}}},
			},
		},
	}
	_, err = cs.AppsV1().Deployments("default").Create(ctx, dep, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() int32 {
		d, err := cs.AppsV1().Deployments("default").Get(ctx, "hello", metav1.GetOptions{})
		if err != nil {
			return -1
		}
		return d.Status.ReadyReplicas
	}, 2*time.Minute, 200*time.Millisecond).Should(Equal(int32(3)))
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=hello"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pods.Items).To(HaveLen(3))
	for _, p := range pods.Items {
		g.Expect(p.Spec.NodeName).To(HavePrefix("kwok-node-"))
		g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
	}
}

// dumpPodsAndEvents logs the default namespace's pods, their conditions,
// the events and the tail of kwok's log, so that a pod that never became
// ready can be explained from the test output alone.
func dumpPodsAndEvents(t *testing.T, kubeconfig, kwokLog string) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Logf("no dump: %v", err)
		return
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Logf("no dump: %v", err)
		return
	}
	ctx := context.Background()
	if pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{}); err == nil {
		for _, p := range pods.Items {
			t.Logf("pod %s node=%q phase=%s conditions=%+v", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Conditions)
		}
	}
	if nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
		for _, n := range nodes.Items {
			t.Logf("node %s taints=%+v conditions=%+v", n.Name, n.Spec.Taints, n.Status.Conditions)
		}
	}
	if events, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{}); err == nil {
		for _, e := range events.Items {
			t.Logf("event %s %s/%s %s: %s", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
		}
	}
	if data, err := os.ReadFile(kwokLog); err == nil {
		if len(data) > 8192 {
			data = data[len(data)-8192:]
		}
		t.Logf("tail of kwok's log:\n%s", data)
	}
}
