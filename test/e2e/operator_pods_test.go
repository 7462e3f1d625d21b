package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/metrics"
	"github.com/caravan-dev/caravan/internal/operatorimage"
	"github.com/caravan-dev/caravan/internal/operatorpod"
	"github.com/caravan-dev/caravan/test/harness"
)

// kubectl runs the local cluster's kubectl as the administrator.
func kubectl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(env.Binaries.Kubectl, append([]string{"--kubeconfig", env.Cluster.Kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// runningPod waits until operator id in ns has exactly one running, ready
// pod and returns it.
func runningPod(t *testing.T, ns, id string) corev1.Pod {
	t.Helper()
	var pod corev1.Pod
	NewWithT(t).Eventually(func() error {
		var ready []corev1.Pod
		for _, p := range operatorPods(t, ns, id) {
			if p.DeletionTimestamp == nil && podReady(&p) {
				ready = append(ready, p)
			}
		}
		if len(ready) != 1 {
			return errorf("%d ready pods of operator %s", len(ready), id)
		}
		pod = ready[0]
		return nil
	}, timeout, 250*time.Millisecond).Should(Succeed())
	return pod
}

// TestInstalledOperatorsRunAsPodsOfTheirImage: two operators installed
// through the CLI run as pods of the process node, from the operator image
// built from this tree and pushed to the local registry, admitted by
// PodSecurity restricted; each reconciles its integration; kubectl logs
// shows their start; a deleted pod is replaced and the integrations keep
// their pods.
func TestInstalledOperatorsRunAsPodsOfTheirImage(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	admin := env.Kubeconfig(t, "admin", "system:masters")
	ops, apps, other := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	ns := &corev1.Namespace{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: ops}, ns)).To(Succeed())
	patch := client.MergeFrom(ns.DeepCopy())
	ns.Labels = map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}
	g.Expect(env.Client.Patch(ctx, ns, patch)).To(Succeed())

	for _, inst := range []struct {
		id   string
		args []string
	}{{"pod-a", nil}, {"pod-b", []string{"--watch-namespaces", apps + "," + other,
		"--requests", "cpu=100m,memory=64Mi", "--limits", "cpu=1500m,memory=256Mi", "--pprof"}}} {
		uninstallOnCleanup(t, admin, ops, inst.id)
		out, errOut, err := cli(t, admin, append([]string{"install", "-n", ops, "-x", inst.id, "--wait", "--skip-admission"}, inst.args...)...)
		g.Expect(err).NotTo(HaveOccurred(), "install %s: %s\n%s", inst.id, out, errOut)
	}

	t.Log("each operator is a pod of the real node (process or kubelet), running the pushed image by digest")
	podA, podB := runningPod(t, ops, "pod-a"), runningPod(t, ops, "pod-b")
	for _, p := range []corev1.Pod{podA, podB} {
		g.Expect(p.Spec.NodeName).To(Equal(env.Cluster.PodNodeName()))
		image := p.Spec.Containers[0].Image
		g.Expect(image).To(HavePrefix(env.Cluster.RegistryAddress + "/" + operatorimage.Repository + "@sha256:"))
		// A digest: alone (the process node) or of a repository (containerd's).
		g.Expect(p.Status.ContainerStatuses[0].ImageID).To(MatchRegexp(`(^|@)sha256:[0-9a-f]{64}$`))
	}
	g.Expect(podB.Spec.Containers[0].Args).To(ContainElement("--watch-namespaces=" + strings.Join(sortedPair(apps, other), ",")))

	t.Log("each operator's Go memory limit is 90% of its container's, and it reports its own memory apart from its binary's pages")
	for p, limit := range map[*corev1.Pod]float64{&podA: 512 << 20, &podB: 256 << 20} {
		url := harness.PodMetricsURL(p.Status.PodIP)
		g.Eventually(func() float64 {
			v, _ := env.Metric(url, "go_gc_gomemlimit_bytes")
			return v
		}, timeout).Should(BeEquivalentTo(float64(int64(limit)/10*9)), "pod %s", p.Name)
		own, ok := env.Metric(url, metrics.AnonymousMemory)
		g.Expect(ok).To(BeTrue(), "pod %s serves no %s", p.Name, metrics.AnonymousMemory)
		rss, _ := env.Metric(url, "process_resident_memory_bytes")
		g.Expect(own).To(And(BeNumerically(">", 0), BeNumerically("<", rss)), "pod %s", p.Name)
	}

	t.Log("each operator runs as many Go processors as its container's CPU limit, rounded up to whole cores")
	for p, processors := range map[*corev1.Pod]float64{&podA: 1, &podB: 2} {
		v, ok := env.Metric(harness.PodMetricsURL(p.Status.PodIP), "go_sched_gomaxprocs_threads")
		g.Expect(ok).To(BeTrue(), "pod %s serves no go_sched_gomaxprocs_threads", p.Name)
		g.Expect(v).To(Equal(processors), "pod %s", p.Name)
	}

	t.Log("metrics and profiles go over HTTPS to a token the API server reviews, with the metrics reader role, and to no other caller")
	scraper, err := env.Scraper()
	g.Expect(err).NotTo(HaveOccurred())
	cs, err := kubernetes.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	stranger := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "stranger", Namespace: other}}
	_, err = cs.CoreV1().ServiceAccounts(other).Create(ctx, stranger, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	tr, err := cs.CoreV1().ServiceAccounts(other).CreateToken(ctx, stranger.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	for who, get := range map[string]func(context.Context, string) ([]byte, error){
		"no token":                 operatorpod.NewScraper("").Get,
		"a token without the role": operatorpod.NewScraper(tr.Status.Token).Get,
	} {
		_, err := get(ctx, harness.PodMetricsURL(podB.Status.PodIP))
		g.Expect(err).To(MatchError(Or(ContainSubstring("401 Unauthorized"), ContainSubstring("403 Forbidden"))), "the metrics, to %s", who)
		_, err = get(ctx, operatorpod.PprofURL(podB.Status.PodIP)+"/debug/pprof/cmdline")
		g.Expect(err).To(MatchError(Or(ContainSubstring("401 Unauthorized"), ContainSubstring("403 Forbidden"))), "the profiles, to %s", who)
	}
	cmdline, err := scraper.Get(ctx, operatorpod.PprofURL(podB.Status.PodIP)+"/debug/pprof/cmdline")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(cmdline)).To(ContainSubstring("--pprof"))
	_, err = scraper.Get(ctx, operatorpod.PprofURL(podA.Status.PodIP)+"/debug/pprof/cmdline")
	g.Expect(err).To(MatchError(ContainSubstring("404")), "an operator installed without --pprof serves profiles")

	t.Log("PodSecurity restricted is enforced in the operator namespace: the operator is admitted, a privileged pod is not")
	privileged := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "privileged", Namespace: ops},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x",
			SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}}}
	err = env.Client.Create(ctx, privileged)
	g.Expect(err).To(MatchError(ContainSubstring("violates PodSecurity \"restricted")))

	t.Log("kubectl logs shows each operator's start")
	for _, p := range []corev1.Pod{podA, podB} {
		out, err := kubectl(t, "logs", "-n", ops, p.Name)
		g.Expect(err).NotTo(HaveOccurred(), out)
		g.Expect(out).To(ContainSubstring("Starting Caravan operator"))
	}

	t.Log("each operator reconciles its own integration")
	itA, itB := newIntegration(apps, "app-of-pod-a", "pod-a", 1), newIntegration(apps, "app-of-pod-b", "pod-b", 1)
	create(t, itA)
	create(t, itB)
	waitRunningUnder(t, client.ObjectKeyFromObject(itA), "pod-a")
	waitRunningUnder(t, client.ObjectKeyFromObject(itB), "pod-b")
	iop := &camelv1alpha1.IntegrationOperator{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "pod-a"}, iop)).To(Succeed())
	g.Expect(iop.Status.Leader).To(HavePrefix(podA.Name+"_"), "the registration names another leader than the pod")

	t.Log("a deleted operator pod is replaced, and the integration keeps its pods")
	before := integrationPods(t, apps, "app-of-pod-a")
	g.Expect(env.Client.Delete(ctx, &podA)).To(Succeed())
	g.Eventually(func() string {
		return runningPodName(t, ops, "pod-a")
	}, timeout, 250*time.Millisecond).ShouldNot(Or(BeEmpty(), Equal(podA.Name)))
	g.Eventually(func() (string, error) {
		cur := &camelv1alpha1.IntegrationOperator{}
		err := env.Client.Get(ctx, client.ObjectKey{Name: "pod-a"}, cur)
		return cur.Status.Leader, err
	}, timeout, 250*time.Millisecond).ShouldNot(HavePrefix(podA.Name + "_"))
	waitRunningUnder(t, client.ObjectKeyFromObject(itA), "pod-a")
	g.Expect(integrationPods(t, apps, "app-of-pod-a")).To(Equal(before), "the operator's restart restarted the integration's pods")
}

// runningPodName is the name of the ready pod of operator id, "" while
// there is none.
func runningPodName(t *testing.T, ns, id string) string {
	for _, p := range operatorPods(t, ns, id) {
		if p.DeletionTimestamp == nil && podReady(&p) {
			return p.Name
		}
	}
	return ""
}

// integrationPods names the pods of an integration, with their uids.
func integrationPods(t *testing.T, ns, integration string) []string {
	t.Helper()
	pods := &corev1.PodList{}
	if err := env.Client.List(context.Background(), pods, client.InNamespace(ns),
		client.MatchingLabels{"camel.apache.org/integration": integration}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pods.Items {
		out = append(out, p.Name+"/"+string(p.UID))
	}
	return out
}

func sortedPair(a, b string) []string {
	if a > b {
		return []string{b, a}
	}
	return []string{a, b}
}

// TestTheOperatorImageIsANonRootIndexForTwoPlatforms: caravan image push
// builds the image for linux/amd64 and linux/arm64 and pushes the index,
// whose images run the binary as user 65532 with the OCI labels.
func TestTheOperatorImageIsANonRootIndexForTwoPlatforms(t *testing.T) {
	g := NewWithT(t)
	out, errOut, err := cli(t, env.Kubeconfig(t, "admin", "system:masters"), "image", "push",
		env.Cluster.RegistryAddress+"/e2e/caravan", "--insecure", "--version", "v0.0.0-e2e")
	g.Expect(err).NotTo(HaveOccurred(), "%s\n%s", out, errOut)
	g.Expect(errOut).To(ContainSubstring("linux/arm64: "))
	ref, err := name.ParseReference(strings.TrimSpace(out), name.Insecure)
	g.Expect(err).NotTo(HaveOccurred(), out)
	idx, err := remote.Index(ref)
	g.Expect(err).NotTo(HaveOccurred())
	m, err := idx.IndexManifest()
	g.Expect(err).NotTo(HaveOccurred())
	var platforms []string
	for _, d := range m.Manifests {
		platforms = append(platforms, d.Platform.String())
		img, err := idx.Image(d.Digest)
		g.Expect(err).NotTo(HaveOccurred())
		cfg, err := img.ConfigFile()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cfg.Config.User).To(Equal("65532:65532"))
		g.Expect(cfg.Config.Entrypoint).To(Equal([]string{operatorimage.Entrypoint}))
		g.Expect(cfg.Config.Labels).To(HaveKeyWithValue(operatorimage.LabelVersion, "v0.0.0-e2e"))
		g.Expect(cfg.Config.Labels).To(HaveKey(operatorimage.LabelRevision))
		g.Expect(cfg.Architecture).To(Equal(d.Platform.Architecture))
		files, err := image.ListFiles(img)
		g.Expect(err).NotTo(HaveOccurred())
		bin := string(files[operatorimage.Entrypoint])
		g.Expect(bin).To(ContainSubstring("Run a Caravan operator"), "the image's binary runs no operator")
		g.Expect(bin).NotTo(ContainSubstring("Run a local Kubernetes cluster for Caravan"),
			"the image's binary holds the CLI's other commands")
	}
	g.Expect(platforms).To(ConsistOf("linux/amd64", "linux/arm64"))
	tagged, err := name.ParseReference(env.Cluster.RegistryAddress+"/e2e/caravan:v0.0.0-e2e", name.Insecure)
	g.Expect(err).NotTo(HaveOccurred())
	desc, err := remote.Head(tagged)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(desc.Digest.String()).To(Equal(strings.SplitN(strings.TrimSpace(out), "@", 2)[1]), "the tag names another index")
}
