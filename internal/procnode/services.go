package procnode

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubectl/pkg/util/podutils"
)

// ServiceCIDR is the range of the local cluster's Service addresses: loopback addresses, which
// the process node serves as kube-proxy does, and which it never gives a pod.
const ServiceCIDR = "127.254.0.0/16"

// serviceSecondOctet is ServiceCIDR's second octet, which pod addresses avoid.
const serviceSecondOctet = 254

// serviceProxy serves each TCP port of each Service's cluster address on the machine, forwarding
// every connection to a ready pod the Service selects, as kube-proxy's userspace mode did: the
// local cluster's Services answer from the host and from its pods.
type serviceProxy struct {
	services corelisters.ServiceLister
	// pods are the node's own pods, the endpoints it can reach.
	pods corelisters.PodLister

	mu sync.Mutex
	// listeners are the addresses served, by ip:port.
	listeners map[string]net.Listener
}

// runServiceProxy watches Services and serves them, with the node's pods, until ctx ends.
func (n *Node) runServiceProxy(ctx context.Context, pods corelisters.PodLister) {
	factory := informers.NewSharedInformerFactory(n.client, 10*time.Minute)
	p := &serviceProxy{services: factory.Core().V1().Services().Lister(), pods: pods, listeners: map[string]net.Listener{}}
	changed := make(chan struct{}, 1)
	poke := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { notify(changed) },
		UpdateFunc: func(any, any) { notify(changed) },
		DeleteFunc: func(any) { notify(changed) },
	}
	if _, err := factory.Core().V1().Services().Informer().AddEventHandler(poke); err != nil {
		fmt.Fprintln(os.Stderr, "service proxy:", err)
		return
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	defer p.closeAll()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
			p.sync(ctx)
		}
	}
}

// notify asks for a sync without blocking; one pending ask is enough.
func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// sync listens on the address of every TCP port of every Service in ServiceCIDR, and stops
// listening on those that are gone.
func (p *serviceProxy) sync(ctx context.Context) {
	services, err := p.services.List(labels.Everything())
	if err != nil {
		return
	}
	_, cidr, _ := net.ParseCIDR(ServiceCIDR)
	want := map[string]func(net.Conn){}
	for _, svc := range services {
		for _, ip := range svc.Spec.ClusterIPs {
			if parsed := net.ParseIP(ip); parsed == nil || !cidr.Contains(parsed) {
				continue
			}
			for _, port := range svc.Spec.Ports {
				if port.Protocol != "" && port.Protocol != corev1.ProtocolTCP {
					continue
				}
				want[net.JoinHostPort(ip, strconv.Itoa(int(port.Port)))] = p.forwarder(svc.Namespace, svc.Name, port.Name)
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for addr, l := range p.listeners {
		if _, ok := want[addr]; !ok {
			l.Close()
			delete(p.listeners, addr)
		}
	}
	for addr, forward := range want {
		if _, ok := p.listeners[addr]; ok {
			continue
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			// Another local cluster on this machine may hold the address.
			fmt.Fprintf(os.Stderr, "service proxy: serving %s: %v\n", addr, err)
			continue
		}
		p.listeners[addr] = l
		go serve(ctx, l, forward)
	}
}

// serve hands every connection l accepts to forward, until l is closed.
func serve(ctx context.Context, l net.Listener, forward func(net.Conn)) {
	for ctx.Err() == nil {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		go forward(conn)
	}
}

// forwarder connects a client of the Service's port portName to a ready endpoint of it.
func (p *serviceProxy) forwarder(namespace, service, portName string) func(net.Conn) {
	return func(conn net.Conn) {
		defer conn.Close()
		addr, ok := p.endpoint(namespace, service, portName)
		if !ok {
			return // no ready endpoint: refused, as kube-proxy rejects it
		}
		upstream, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return
		}
		defer upstream.Close()
		done := make(chan struct{}, 2)
		go func() { _, _ = io.Copy(upstream, conn); done <- struct{}{} }()
		go func() { _, _ = io.Copy(conn, upstream); done <- struct{}{} }()
		<-done
	}
}

// endpoint picks a ready pod of this node that the Service selects, at random, and returns its
// address with the Service port's target port. The node's own pods are the Service's reachable
// endpoints: their loopback addresses are refused in Endpoints and EndpointSlices.
func (p *serviceProxy) endpoint(namespace, service, portName string) (string, bool) {
	svc, err := p.services.Services(namespace).Get(service)
	if err != nil || len(svc.Spec.Selector) == 0 {
		return "", false
	}
	i := slices.IndexFunc(svc.Spec.Ports, func(sp corev1.ServicePort) bool { return sp.Name == portName })
	if i < 0 {
		return "", false
	}
	target := svc.Spec.Ports[i].TargetPort
	pods, err := p.pods.Pods(namespace).List(labels.SelectorFromSet(svc.Spec.Selector))
	if err != nil {
		return "", false
	}
	var ready []string
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil || pod.Status.PodIP == "" || !podutils.IsPodReady(pod) {
			continue
		}
		if port := targetPort(pod, target, svc.Spec.Ports[i].Port); port != 0 {
			ready = append(ready, net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(port))))
		}
	}
	if len(ready) == 0 {
		return "", false
	}
	return ready[rand.IntN(len(ready))], true
}

// targetPort resolves a Service port's target port on pod: a number, a container port's name, or
// (unset) the Service port itself; 0 when a name matches no port of the pod.
func targetPort(pod *corev1.Pod, target intstr.IntOrString, port int32) int32 {
	switch {
	case target.Type == intstr.String && target.StrVal != "":
		for _, c := range pod.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == target.StrVal {
					return cp.ContainerPort
				}
			}
		}
		return 0
	case target.IntVal != 0:
		return target.IntVal
	}
	return port
}

func (p *serviceProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for addr, l := range p.listeners {
		l.Close()
		delete(p.listeners, addr)
	}
}
