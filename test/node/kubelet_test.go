// Package node_test runs the local cluster's kubelet node, a real kubelet with containerd, and
// checks what a pod gets on it: its own network namespace and address, Services through
// kube-proxy, hostPorts, the API server, logs through the API, and a memory limit the kernel enforces.
package node_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/procnode"
)

const namespace = metav1.NamespaceDefault

// webHostPort is the hostPort of the web pod's server.
const webHostPort = 18080

func TestTheKubeletNodeRunsRealPods(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the kubelet node needs root (CI runs as root)")
	}
	ctx := context.Background()
	earlier := podNetworkRules(t) // of pods earlier clusters' stops left, before they were released
	c := startCluster(t)
	cfg, err := c.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	server := pushServerImage(t, c)

	t.Run("the node is a kubelet on containerd, of the process node's kind", func(t *testing.T) {
		node, err := cs.CoreV1().Nodes().Get(ctx, localcluster.KubeletNodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		info := node.Status.NodeInfo
		if info.KubeletVersion != localcluster.KubernetesVersion || info.ContainerRuntimeVersion != "containerd://"+strings.TrimPrefix(localcluster.ContainerdVersion, "v") {
			t.Errorf("node runs kubelet %q on %q", info.KubeletVersion, info.ContainerRuntimeVersion)
		}
		if node.Labels[procnode.KindLabel] != procnode.KindProcess {
			t.Errorf("node labels %v lack %s=%s", node.Labels, procnode.KindLabel, procnode.KindProcess)
		}
	})

	webPod := serverPod("web", server, nil, nil)
	webPod.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: webHostPort}}
	web := runPod(t, cs, webPod)
	client := runPod(t, cs, serverPod("client", server, nil, nil))
	svc, err := cs.CoreV1().Services(namespace).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kubernetesSvc, err := cs.CoreV1().Services(namespace).Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("a pod has its own address on the node's bridge, which the machine reaches", func(t *testing.T) {
		_, pods, _ := net.ParseCIDR(localcluster.PodCIDR)
		if ip := net.ParseIP(web.Status.PodIP); ip == nil || !pods.Contains(ip) || web.Status.PodIP == localcluster.NodeAddress {
			t.Fatalf("pod address %q is not a pod's of %s", web.Status.PodIP, localcluster.PodCIDR)
		}
		if body := get(t, "http://"+net.JoinHostPort(web.Status.PodIP, "8080")+"/"); body != "pod web\n" {
			t.Errorf("the pod answered %q", body)
		}
	})
	t.Run("kube-proxy serves a Service's address to the machine and to pods", func(t *testing.T) {
		// kube-proxy serves the Service once its endpoints are in.
		answers(t, "http://"+svc.Spec.ClusterIP+"/", "pod web\n")
		answers(t, "http://"+net.JoinHostPort(client.Status.PodIP, "8080")+"/get?url=http://"+svc.Spec.ClusterIP+"/", "200 pod web\n")
	})
	t.Run("a pod reaches a Service by its name, through the cluster DNS", func(t *testing.T) {
		for _, name := range []string{"web", "web.default", "web.default.svc." + localcluster.ClusterDomain} {
			answers(t, "http://"+net.JoinHostPort(client.Status.PodIP, "8080")+"/get?url=http://"+name+"/", "200 pod web\n")
		}
		resp, err := http.Get("http://" + net.JoinHostPort(client.Status.PodIP, "8080") + "/get?url=http://nosuch.default.svc." + localcluster.ClusterDomain + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), "no such host") {
			t.Errorf("a name of no Service answered %d %q, want no such host", resp.StatusCode, body)
		}
	})
	t.Run("a container's hostPort is served on the node's address", func(t *testing.T) {
		answers(t, "http://"+net.JoinHostPort(localcluster.NodeAddress, strconv.Itoa(webHostPort))+"/", "pod web\n")
	})
	t.Run("a pod reaches the API server at the kubernetes Service", func(t *testing.T) {
		url := "https://" + net.JoinHostPort(kubernetesSvc.Spec.ClusterIP, "443") + "/version"
		body := get(t, "http://"+net.JoinHostPort(client.Status.PodIP, "8080")+"/get?url="+url)
		if !strings.HasPrefix(body, "200 ") || !strings.Contains(body, `"gitVersion": "`+localcluster.KubernetesVersion+`"`) {
			t.Errorf("the API server answered a pod %q", body)
		}
	})
	t.Run("the API server reads a pod's log from the kubelet", func(t *testing.T) {
		logs, err := cs.CoreV1().Pods(namespace).GetLogs("web", &corev1.PodLogOptions{}).DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(logs), "pod web serving on :8080") {
			t.Errorf("log of web: %q", logs)
		}
	})
	t.Run("a container over its memory limit is OOMKilled", func(t *testing.T) { checkOOMKilled(t, cs, server) })
	t.Run("a second kubelet node is refused while one runs, and the refusal leaves it whole", func(t *testing.T) {
		checkSecondRefused(t, c, svc.Spec.ClusterIP)
	})
	t.Run("stopping the cluster leaves no container, mount or bridge behind", func(t *testing.T) { checkStopLeavesNothing(t, c, earlier) })
}

// checkOOMKilled runs a pod of server that holds more memory than its limit, and checks that
// the kernel ends it as Kubernetes reports it: OOMKilled, exit 137.
func checkOOMKilled(t *testing.T, cs kubernetes.Interface, server string) {
	ctx := context.Background()
	pod := serverPod("hog", server, map[string]string{"HOLD_MB": "256"}, corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")})
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	pod.Spec.Containers[0].ReadinessProbe = nil
	if _, err := cs.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var terminated *corev1.ContainerStateTerminated
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(namespace).Get(ctx, "hog", metav1.GetOptions{})
		if err != nil || len(p.Status.ContainerStatuses) == 0 {
			return false, err
		}
		terminated = p.Status.ContainerStatuses[0].State.Terminated
		return terminated != nil, nil
	})
	if err != nil {
		t.Fatalf("hog never ended: %v", err)
	}
	if terminated.Reason != "OOMKilled" || terminated.ExitCode != 137 {
		t.Errorf("hog ended %s with %d, not OOMKilled with 137", terminated.Reason, terminated.ExitCode)
	}
}

// checkSecondRefused checks that a second kubelet node is refused while c's runs, and that
// c's Service at serviceIP still answers after the refusal.
func checkSecondRefused(t *testing.T, c *localcluster.Cluster, serviceIP string) {
	ctx := context.Background()
	cacheDir, err := localcluster.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	_, err = localcluster.Start(ctx, localcluster.Options{
		Dir: filepath.Join(shortDir(t), "second"), Full: true, Nodes: 1, Attached: true, Registry: true,
		CacheDir: cacheDir, Node: localcluster.NodeKubelet, NodeBinaries: nodeBinaries(t),
	})
	if err == nil || !strings.Contains(err.Error(), c.Dir+" runs this machine's kubelet node") {
		t.Fatalf("a second kubelet node started, or failed otherwise: %v", err)
	}
	answers(t, "http://"+serviceIP+"/", "pod web\n")
}

// checkStopLeavesNothing stops c and checks that no containerd shim, masquerade or hostPort rule
// of its pods (those not in earlier), mount under its directory or bridge is left.
func checkStopLeavesNothing(t *testing.T, c *localcluster.Cluster, earlier map[string]bool) {
	shim := filepath.Join(filepath.Dir(nodeBinaries(t).Containerd), "containerd-shim-runc-v2")
	if running(shim) == 0 {
		t.Fatal("no containerd shim runs before the stop: the check below would prove nothing")
	}
	attached := podNetworkRules(t)
	for id := range earlier {
		delete(attached, id)
	}
	if len(attached) == 0 {
		t.Fatal("no pod has network rules before the stop: the check below would prove nothing")
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	for id := range podNetworkRules(t) {
		if attached[id] {
			t.Errorf("the network rules of pod sandbox %s remain after the stop", id)
		}
	}
	if n := running(shim); n > 0 {
		t.Errorf("%d containerd shims still run", n)
	}
	if _, err := net.InterfaceByName(localcluster.NodeBridge); err == nil {
		t.Errorf("the bridge %s is still there", localcluster.NodeBridge)
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mounts), " "+c.Dir+"/") {
		t.Errorf("mounts under %s remain:\n%s", c.Dir, mounts)
	}
}

// sandboxID is the pod sandbox a rule of the CNI plugins is for, in its comment.
var sandboxID = regexp.MustCompile(`net: caravan, if: \S+, id: ([0-9a-f]{64})`)

// podNetworkRules are the pod sandboxes that the machine's nftables rules of the node's network
// (masquerade, hostPort) are for.
func podNetworkRules(t *testing.T) map[string]bool {
	bins := nodeBinaries(t)
	cmd := exec.Command(bins.Nft, "list", "ruleset")
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+bins.NftLibraries)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("nft list ruleset: %v: %s", err, out)
	}
	ids := map[string]bool{}
	for _, m := range sandboxID.FindAllStringSubmatch(string(out), -1) {
		ids[m[1]] = true
	}
	return ids
}

// startCluster starts a full local cluster whose real pods run on the kubelet node.
func startCluster(t *testing.T) *localcluster.Cluster {
	ctx := context.Background()
	cacheDir, err := localcluster.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	bins, err := localcluster.EnsureBinaries(ctx, cacheDir, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	nodeBins := nodeBinaries(t)
	release, err := localcluster.WaitForKubeletNode(ctx, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	c, err := localcluster.Start(ctx, localcluster.Options{
		Dir: filepath.Join(shortDir(t), "cluster"), Binaries: bins, Full: true, Nodes: 1, Attached: true,
		Registry: true, CacheDir: cacheDir, Node: localcluster.NodeKubelet, NodeBinaries: nodeBins,
		Progress: os.Stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
	})
	return c
}

// shortDir is a directory for a cluster that the test removes, short whatever the test's name:
// the kubelet's sockets are under it.
func shortDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "node-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func nodeBinaries(t *testing.T) localcluster.NodeBinaries {
	cacheDir, err := localcluster.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	bins, err := localcluster.EnsureNodeBinaries(context.Background(), cacheDir, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	return bins
}

// pushServerImage builds ./server, static, and pushes an image of it alone to the cluster's
// registry.
func pushServerImage(t *testing.T, c *localcluster.Cluster) string {
	bin := filepath.Join(t.TempDir(), "server")
	cmd := exec.Command("go", "build", "-o", bin, "./server")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the test server: %v\n%s", err, out)
	}
	ref := c.RegistryAddress + "/test/server:1"
	if err := c.PushProgram(context.Background(), bin, ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

// serverPod is a pod of the test server, restricted as Caravan's own pods are, and ready when
// it answers on its port.
func serverPod(name, img string, env map[string]string, limits corev1.ResourceList) *corev1.Pod {
	var vars []corev1.EnvVar
	for k, v := range env {
		vars = append(vars, corev1.EnvVar{Name: k, Value: v})
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{
				Name: "server", Image: img, Env: vars,
				Resources:      corev1.ResourceRequirements{Limits: limits},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 1},
				SecurityContext: &corev1.SecurityContext{
					RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532), AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
			}},
		},
	}
}

// runPod creates pod and waits until it is ready on the kubelet node.
func runPod(t *testing.T, cs kubernetes.Interface, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	if _, err := cs.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var last *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = p
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("pod %s never ready: %v; status %+v", pod.Name, err, last.Status)
	}
	if last.Spec.NodeName != localcluster.KubeletNodeName {
		t.Fatalf("pod %s runs on %s, not on the kubelet node", pod.Name, last.Spec.NodeName)
	}
	return last
}

// get returns the body of url, failing the test unless it answers 200.
func get(t *testing.T, url string) string {
	t.Helper()
	client := &http.Client{Timeout: 15 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	return string(body)
}

// answers waits up to a minute for url to answer 200 with the body want.
func answers(t *testing.T, url, want string) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		resp, err := client.Get(url)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		last = fmt.Sprintf("%d %s", resp.StatusCode, body)
		return resp.StatusCode == http.StatusOK && string(body) == want, nil
	})
	if err != nil {
		t.Errorf("GET %s never answered %q; last: %s", url, want, last)
	}
}

// running counts the processes that run the program at path.
func running(path string) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		exe, err := os.Readlink(fmt.Sprintf("/proc/%s/exe", e.Name()))
		if err == nil && strings.TrimSuffix(exe, " (deleted)") == path {
			n++
		}
	}
	return n
}
