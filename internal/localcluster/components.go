package localcluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/caravan-dev/caravan/internal/procnode"
)

// controllers are the kube-controller-manager controllers a local cluster
// runs. They are enough for Deployments to reach ready pods on kwok
// nodes, for owner-reference garbage collection, for namespaces to be
// deleted, for claims to bind to the volumes the process node
// provisions, and for quotas, CronJobs and Services to work as on any cluster.
var controllers = []string{
	"deployment-controller",
	"replicaset-controller",
	"garbage-collector-controller",
	"namespace-controller",
	"serviceaccount-controller",
	// It fills the token Secrets of service accounts, which a PodMonitor sends.
	"serviceaccount-token-controller",
	"job-controller",
	// Starts the jobs of the cron trait's CronJobs.
	"cronjob-controller",
	// Counts what pods use against a namespace's ResourceQuota, without which the quota admits no pod.
	"resourcequota-controller",
	"node-lifecycle-controller",
	"endpointslice-controller",
	"root-ca-certificate-publisher-controller",
	"persistentvolume-binder-controller",
	"persistentvolumeclaim-protection-controller",
	"persistentvolume-protection-controller",
	// Fills the edit, view and admin roles with the rules of roles labelled to aggregate into them.
	"clusterrole-aggregation-controller",
}

// ContextName is the kubeconfig context of a local cluster.
const ContextName = "caravan-local"

func (c *Cluster) pki(name string) string { return filepath.Join(c.Dir, "pki", name) }

func (c *Cluster) writePKI(_ context.Context, _ Options) error {
	ca, err := newAuthority()
	if err != nil {
		return err
	}
	if err := ca.save(c.pki("")); err != nil {
		return fmt.Errorf("writing CA: %w", err)
	}
	c.ca = ca
	serving, err := ca.serving()
	if err != nil {
		return err
	}
	saPrivate, saPublic, err := serviceAccountKey()
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"apiserver.crt": serving.CertPEM, "apiserver.key": serving.KeyPEM,
		"sa.key": saPrivate, "sa.pub": saPublic,
	}
	if c.Node == NodeKubelet {
		// The API server's client certificate towards the kubelet, for logs and exec.
		kubeletClient, err := ca.client("kube-apiserver-kubelet-client", []string{"system:masters"})
		if err != nil {
			return err
		}
		files["kubelet-client.crt"], files["kubelet-client.key"] = kubeletClient.CertPEM, kubeletClient.KeyPEM
	}
	for name, data := range files {
		if err := os.WriteFile(c.pki(name), data, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}

func (c *Cluster) startEtcd(ctx context.Context, opts Options) error {
	clientPort, err := FreeServerPort()
	if err != nil {
		return err
	}
	peerPort, err := FreeServerPort()
	if err != nil {
		return err
	}
	clientURL, peerURL := loopbackURL("http", clientPort), loopbackURL("http", peerPort)
	p, err := c.launch(opts, "etcd", opts.Binaries.Etcd, []string{
		"--name=local",
		"--data-dir=" + filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls=" + clientURL, "--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=local=" + peerURL,
		"--unsafe-no-fsync=true",
		"--quota-backend-bytes=8589934592",
		"--log-level=warn",
	})
	if err != nil {
		return err
	}
	c.etcdURL = clientURL
	return waitFor(ctx, p, 60*time.Second, func(ctx context.Context) (bool, error) {
		return httpOK(ctx, http.DefaultClient, clientURL+"/health")
	})
}

func (c *Cluster) startAPIServer(ctx context.Context, opts Options) error {
	port, err := FreeServerPort()
	if err != nil {
		return err
	}
	host := c.HostAddress()
	args := []string{
		"--etcd-servers=" + c.etcdURL,
		"--bind-address=" + host, "--advertise-address=" + host,
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + c.pki("apiserver.crt"), "--tls-private-key-file=" + c.pki("apiserver.key"),
		"--client-ca-file=" + c.pki("ca.crt"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + c.pki("sa.pub"),
		"--service-account-signing-key-file=" + c.pki("sa.key"),
		"--allow-privileged=true",
		"--kubelet-preferred-address-types=InternalIP",
		"--max-requests-inflight=2000", "--max-mutating-requests-inflight=1000",
		"--profiling=" + strconv.FormatBool(opts.Profiling),
	}
	if c.Node == NodeKubelet {
		// kube-proxy serves the Service addresses; the Node authorizer limits what the
		// kubelet reads to its own pods'; the API server checks the kubelet's certificate.
		args = append(args, "--service-cluster-ip-range="+KubeletServiceCIDR,
			"--authorization-mode=Node,RBAC",
			"--kubelet-client-certificate="+c.pki("kubelet-client.crt"), "--kubelet-client-key="+c.pki("kubelet-client.key"),
			"--kubelet-certificate-authority="+c.pki("ca.crt"))
	} else {
		// Loopback addresses, which the process node serves as kube-proxy does, and which
		// the process node's own endpoints stand for.
		args = append(args, "--service-cluster-ip-range="+procnode.ServiceCIDR,
			"--authorization-mode=RBAC", "--endpoint-reconciler-type=none")
	}
	if opts.WithoutMutatingAdmissionPolicies {
		args = append(args, "--disable-admission-plugins=MutatingAdmissionPolicy",
			"--runtime-config=admissionregistration.k8s.io/v1/mutatingadmissionpolicies=false,"+
				"admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings=false")
	}
	if len(opts.AuditPolicy) > 0 {
		policy := filepath.Join(c.Dir, "audit-policy.yaml")
		if err := os.WriteFile(policy, opts.AuditPolicy, 0o644); err != nil {
			return err
		}
		args = append(args, "--audit-policy-file="+policy, "--audit-log-path="+c.AuditLogPath(),
			"--audit-log-format=json", "--audit-log-mode=blocking")
	}
	p, err := c.launch(opts, "kube-apiserver", opts.Binaries.APIServer, args)
	if err != nil {
		return err
	}
	c.Server = "https://" + net.JoinHostPort(host, strconv.Itoa(port))
	admin, err := c.RESTConfig()
	if err != nil {
		return err
	}
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	if err := c.WriteKubeconfig(c.Kubeconfig, "caravan-admin", "system:masters"); err != nil {
		return err
	}
	return c.waitAPIServerReady(ctx, p, admin)
}

// waitAPIServerReady waits until the API server, process p, answers ok on /readyz.
func (c *Cluster) waitAPIServerReady(ctx context.Context, p *Process, admin *rest.Config) error {
	clientset, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return err
	}
	return waitFor(ctx, p, 120*time.Second, func(ctx context.Context) (bool, error) {
		body, err := clientset.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && strings.TrimSpace(string(body)) == "ok", err
	})
}

func (c *Cluster) startControllers(ctx context.Context, opts Options) error {
	cm := filepath.Join(c.Dir, "controller-manager.kubeconfig")
	if err := c.WriteKubeconfig(cm, "system:kube-controller-manager", "system:masters"); err != nil {
		return err
	}
	if _, err := c.launch(opts, "kube-controller-manager", opts.Binaries.ControllerManager, []string{
		"--kubeconfig=" + cm,
		"--controllers=" + strings.Join(controllers, ","),
		"--service-account-private-key-file=" + c.pki("sa.key"),
		"--root-ca-file=" + c.pki("ca.crt"),
		"--leader-elect=false",
		"--secure-port=0",
		"--use-service-account-credentials=false",
		"--kube-api-qps=500", "--kube-api-burst=1000",
		"--concurrent-deployment-syncs=20", "--concurrent-replicaset-syncs=20",
		"--concurrent-gc-syncs=50",
	}); err != nil {
		return err
	}
	sched := filepath.Join(c.Dir, "scheduler.kubeconfig")
	if err := c.WriteKubeconfig(sched, "system:kube-scheduler", "system:masters"); err != nil {
		return err
	}
	if _, err := c.launch(opts, "kube-scheduler", opts.Binaries.Scheduler, []string{
		"--kubeconfig=" + sched,
		"--leader-elect=false",
		"--secure-port=0",
		"--kube-api-qps=500", "--kube-api-burst=1000",
	}); err != nil {
		return err
	}
	kwok := filepath.Join(c.Dir, "kwok.kubeconfig")
	if err := c.WriteKubeconfig(kwok, "kwok", "system:masters"); err != nil {
		return err
	}
	kwokPort, err := FreePort()
	if err != nil {
		return err
	}
	logsConfig, err := c.writeKwokLogs()
	if err != nil {
		return err
	}
	_, err = c.launch(opts, "kwok", opts.Binaries.Kwok, []string{
		"--kubeconfig=" + kwok,
		"--config=" + opts.Binaries.KwokStages,
		"--config=" + logsConfig,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
		"--node-lease-duration-seconds=40",
		// The kwok nodes' kubelet endpoint is kwok's server, over TLS
		// with the API server's certificate (for 127.0.0.1), so that the
		// API server serves their pods' logs.
		"--server-address=127.0.0.1:" + strconv.Itoa(kwokPort),
		"--tls-cert-file=" + c.pki("apiserver.crt"), "--tls-private-key-file=" + c.pki("apiserver.key"),
		"--node-ip=127.0.0.1",
		"--node-port=" + strconv.Itoa(kwokPort),
		"--cidr=10.244.0.0/16",
	})
	return err
}

// KwokPodLog is the log every container of a pod on a kwok node has: kwok
// runs no process, and serves this.
const KwokPodLog = "this container runs on a kwok node of the local cluster, which runs no process: kwok serves this line as its log"

// writeKwokLogs writes kwok's ClusterLogs configuration, which gives every
// container of every pod on a kwok node the log file logs/kwok-pods.log,
// in the CRI log format, followed as it grows.
func (c *Cluster) writeKwokLogs() (string, error) {
	logFile := filepath.Join(c.Dir, "logs", "kwok-pods.log")
	line := fmt.Sprintf("%s stdout F %s\n", time.Now().UTC().Format(time.RFC3339Nano), KwokPodLog)
	if err := os.WriteFile(logFile, []byte(line), 0o644); err != nil {
		return "", fmt.Errorf("writing kwok's pod log: %w", err)
	}
	config := filepath.Join(c.Dir, "kwok-logs.yaml")
	data := fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: caravan-pod-logs
spec:
  logs:
  - logsFile: %q
    follow: true
`, logFile)
	if err := os.WriteFile(config, []byte(data), 0o644); err != nil {
		return "", fmt.Errorf("writing kwok's logs configuration: %w", err)
	}
	return config, nil
}

// WriteKubeconfig writes a kubeconfig that authenticates as user with the
// given groups through a client certificate embedded in the file.
func (c *Cluster) WriteKubeconfig(path, user string, groups ...string) error {
	kp, err := c.ca.client(user, groups)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ContextName] = &clientcmdapi.Cluster{Server: c.Server, CertificateAuthorityData: c.ca.certPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: kp.CertPEM, ClientKeyData: kp.KeyPEM}
	cfg.Contexts[ContextName] = &clientcmdapi.Context{Cluster: ContextName, AuthInfo: user, Namespace: "default"}
	cfg.CurrentContext = ContextName
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

func httpOK(ctx context.Context, client *http.Client, url string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK, nil
}
