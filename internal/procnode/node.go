package procnode

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	vknode "github.com/virtual-kubelet/virtual-kubelet/node"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
)

// nodeIP is the node's address: the machine's loopback.
const nodeIP = "127.0.0.1"

// Labels and taint of a process node.
const (
	// KindLabel tells process nodes ("process") from simulated ones.
	KindLabel = "caravan.dev/node-kind"
	// KindProcess is KindLabel's value on a process node.
	KindProcess = "process"
)

// Config says how to run the node.
type Config struct {
	Name string
	// Dir holds the images, pods and logs.
	Dir string
	// KeptVolumes, when set, holds the volumes of claims annotated KeptAnnotation, by claim
	// name, so that they outlive the cluster.
	KeptVolumes string
	RESTConfig  *rest.Config
	// InitBinary and InitArgs start a container's init (caravan local
	// container-init); the spec file is appended.
	InitBinary string
	InitArgs   []string
	// ServingCert and ServingKey are the TLS key pair of the log endpoint.
	ServingCert, ServingKey string
}

// Node runs the pods scheduled to it. It is virtual-kubelet's provider.
type Node struct {
	cfg        Config
	client     kubernetes.Interface
	images     *imageStore
	env        envResolver
	volumes    volumeWriter
	recorder   record.EventRecorder
	initBinary string
	initArgs   []string

	mu     sync.Mutex // guards the fields below
	pods   map[string]*podRun
	ips    map[string]bool
	notify func(*corev1.Pod)
}

var (
	_ vknode.PodLifecycleHandler = (*Node)(nil)
	_ vknode.PodNotifier         = (*Node)(nil)
)

// Run registers the node and runs its pods until ctx ends; then it stops
// every container.
func Run(ctx context.Context, cfg Config) error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("the process node runs pods in Linux namespaces: it runs on Linux only, not %s", runtime.GOOS)
	}
	cs, err := kubernetes.NewForConfig(cfg.RESTConfig)
	if err != nil {
		return err
	}
	apiURL, err := url.Parse(cfg.RESTConfig.Host)
	if err != nil {
		return fmt.Errorf("reading the API server address: %w", err)
	}
	apiHost, apiPort, err := net.SplitHostPort(apiURL.Host)
	if err != nil {
		apiHost, apiPort = apiURL.Host, "443"
	}
	broadcaster := record.NewBroadcaster()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	n := &Node{cfg: cfg, client: cs, images: &imageStore{dir: filepath.Join(cfg.Dir, "images")},
		env: envResolver{client: cs, apiHost: apiHost, apiPort: apiPort, allocatable: allocatable()}, volumes: volumeWriter{client: cs},
		recorder:   broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "caravan-node", Host: cfg.Name}),
		initBinary: cfg.InitBinary, initArgs: cfg.InitArgs,
		pods: map[string]*podRun{}, ips: map[string]bool{}}
	listener, err := net.Listen("tcp", net.JoinHostPort(nodeIP, "0"))
	if err != nil {
		return err
	}
	port := listener.Addr().(*net.TCPAddr).Port
	logs, err := n.logServer(listener)
	if err != nil {
		return err
	}
	defer logs.Close()
	return n.run(ctx, int32(port))
}

func (n *Node) run(ctx context.Context, port int32) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	nc, err := vknode.NewNodeController(vknode.NewNaiveNodeProvider(), n.nodeObject(port), n.client.CoreV1().Nodes(),
		vknode.WithNodeEnableLeaseV1(n.client.CoordinationV1().Leases(corev1.NamespaceNodeLease), 40))
	if err != nil {
		return err
	}
	podInformers := informers.NewSharedInformerFactoryWithOptions(n.client, time.Minute,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", n.cfg.Name).String()
		}))
	// The pod controller requires these informers; the node reads
	// ConfigMaps and Secrets itself when a pod starts, so they list nothing.
	none := informers.NewSharedInformerFactoryWithOptions(n.client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = "caravan.dev/never-selected=true"
	}))
	pc, err := vknode.NewPodController(vknode.PodControllerConfig{
		PodClient: n.client.CoreV1(), PodInformer: podInformers.Core().V1().Pods(),
		EventRecorder: n.recorder, Provider: n,
		ConfigMapInformer: none.Core().V1().ConfigMaps(), SecretInformer: none.Core().V1().Secrets(),
		ServiceInformer: none.Core().V1().Services(), SkipDownwardAPIResolution: true,
	})
	if err != nil {
		return err
	}
	podInformers.Start(ctx.Done())
	none.Start(ctx.Done())
	go n.runProvisioner(ctx)
	go n.runServiceProxy(ctx, podInformers.Core().V1().Pods().Lister())
	go func() {
		if err := nc.Run(ctx); err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "node controller:", err)
			cancel()
		}
	}()
	err = pc.Run(ctx, 4)
	n.stopAll()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// allocatable is what the node offers its pods: this machine's processors,
// 16Gi of memory and 110 pods.
func allocatable() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI),
		corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
}

// nodeObject is the Node the node registers: its allocatable resources,
// its loopback address and the port of its log endpoint.
func (n *Node) nodeObject(port int32) *corev1.Node {
	capacity := allocatable()
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.cfg.Name, Labels: map[string]string{
			"type": "virtual-kubelet", KindLabel: KindProcess, "kubernetes.io/hostname": n.cfg.Name,
			"kubernetes.io/os": "linux", "kubernetes.io/arch": runtime.GOARCH,
		}},
		Status: corev1.NodeStatus{
			Capacity: capacity, Allocatable: capacity,
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: nodeIP},
				{Type: corev1.NodeHostName, Address: n.cfg.Name}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: port}},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
				Reason: "KubeletReady", Message: "the process node runs pods",
				LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
			NodeInfo: corev1.NodeSystemInfo{OperatingSystem: "linux", Architecture: runtime.GOARCH,
				KubeletVersion: "caravan-process-node"},
		},
	}
}

func (n *Node) logServer(l net.Listener) (*http.Server, error) {
	cert, err := tls.LoadX509KeyPair(n.cfg.ServingCert, n.cfg.ServingKey)
	if err != nil {
		return nil, fmt.Errorf("loading the node's serving certificate: %w", err)
	}
	mux := http.NewServeMux()
	api.AttachPodRoutes(api.PodHandlerConfig{GetContainerLogs: n.containerLogs}, mux, false)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	go func() { _ = srv.ServeTLS(l, "", "") }()
	return srv, nil
}

func (n *Node) event(pod *corev1.Pod, kind, reason, message string) {
	n.recorder.Event(pod, kind, reason, message)
}

func key(namespace, name string) string { return namespace + "/" + name }

// allocateIP gives a pod a loopback address of its own, so that pods do
// not share ports. It picks a random one of 127.0.0.0/8 outside ServiceCIDR
// (several local clusters may run on one machine, each with its own node),
// on which every port the pod declares is free.
func (n *Node) allocateIP(pod *corev1.Pod) (string, error) {
	for range 50 {
		ip := fmt.Sprintf("127.%d.%d.%d", 1+rand.IntN(serviceSecondOctet-1), rand.IntN(256), 1+rand.IntN(254))
		if !n.ips[ip] && portsFree(ip, pod) {
			n.ips[ip] = true
			return ip, nil
		}
	}
	return "", errors.New("no free pod address found on the node")
}

// portsFree tells whether every TCP port pod's containers declare can be
// bound on ip.
func portsFree(ip string, pod *corev1.Pod) bool {
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
				continue
			}
			l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(int(p.ContainerPort))))
			if err != nil {
				return false
			}
			_ = l.Close()
		}
	}
	return true
}

// NotifyPods registers the callback that reports pod status changes.
func (n *Node) NotifyPods(_ context.Context, cb func(*corev1.Pod)) {
	n.mu.Lock()
	n.notify = cb
	n.mu.Unlock()
}

func (n *Node) report(p *corev1.Pod) {
	n.mu.Lock()
	cb := n.notify
	n.mu.Unlock()
	if cb != nil {
		cb(p)
	}
}

// GetPod returns a pod the node runs.
func (n *Node) GetPod(_ context.Context, namespace, name string) (*corev1.Pod, error) {
	n.mu.Lock()
	r, ok := n.pods[key(namespace, name)]
	n.mu.Unlock()
	if !ok {
		return nil, errdefs.NotFoundf("pod %s/%s is not on this node", namespace, name)
	}
	return r.snapshot(), nil
}

// GetPodStatus returns the status of a pod the node runs.
func (n *Node) GetPodStatus(ctx context.Context, namespace, name string) (*corev1.PodStatus, error) {
	p, err := n.GetPod(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return &p.Status, nil
}

// GetPods returns every pod the node runs.
func (n *Node) GetPods(context.Context) ([]*corev1.Pod, error) {
	n.mu.Lock()
	runs := make([]*podRun, 0, len(n.pods))
	for _, r := range n.pods {
		runs = append(runs, r)
	}
	n.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(runs))
	for _, r := range runs {
		out = append(out, r.snapshot())
	}
	return out, nil
}

// UpdatePod takes a pod's new spec; a running container is not changed by
// it (as with a kubelet, only the image of a container could be, and
// Deployments roll by replacing pods).
func (n *Node) UpdatePod(_ context.Context, pod *corev1.Pod) error {
	n.mu.Lock()
	r, ok := n.pods[key(pod.Namespace, pod.Name)]
	n.mu.Unlock()
	if ok {
		r.mu.Lock()
		r.pod.Labels, r.pod.Annotations = pod.Labels, pod.Annotations
		r.mu.Unlock()
	}
	return nil
}
