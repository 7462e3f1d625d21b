package localcluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The kubelet node's cluster DNS: CoreDNS on the node's address, as a cluster's kube-dns serves.
const (
	// ClusterDomain is the cluster's DNS domain: a Service is NAME.NAMESPACE.svc.ClusterDomain.
	ClusterDomain = "cluster.local"
	// coreDNSUser is the identity CoreDNS reads Services and EndpointSlices as.
	coreDNSUser = "system:coredns"
)

// startClusterDNS starts CoreDNS on the node's address, port 53: it answers the cluster's names
// from the API server, as a user that may only read what it serves, and forwards other names to
// the resolver the pods would have had without it. It returns once CoreDNS says it is ready.
func (c *Cluster) startClusterDNS(ctx context.Context, cs kubernetes.Interface, opts Options) error {
	if err := grantCoreDNS(ctx, cs); err != nil {
		return err
	}
	kubeconfig := c.nodeDir("coredns.kubeconfig")
	if err := c.WriteKubeconfig(kubeconfig, coreDNSUser); err != nil {
		return err
	}
	port, err := FreePort()
	if err != nil {
		return err
	}
	ready := net.JoinHostPort(NodeAddress, strconv.Itoa(port))
	corefile := c.nodeDir("Corefile")
	if err := os.WriteFile(corefile, []byte(coreDNSConfig(kubeconfig, ready, podResolvConf())), 0o644); err != nil {
		return err
	}
	p, err := c.launch(opts, "coredns", opts.NodeBinaries.CoreDNS, []string{"-conf", corefile})
	if err != nil {
		return err
	}
	return waitFor(ctx, p, 60*time.Second, func(ctx context.Context) (bool, error) {
		return httpOK(ctx, http.DefaultClient, "http://"+ready+"/ready")
	})
}

// coreDNSConfig is CoreDNS's Corefile: the cluster's zones from the API server (with
// kubeconfig), reverse lookups of other addresses passed on, everything else forwarded to the
// servers of resolvConf (none when ""), and readiness on ready.
func coreDNSConfig(kubeconfig, ready, resolvConf string) string {
	var b strings.Builder
	fmt.Fprintf(&b, ".:53 {\n    bind %s\n    ready %s\n    errors\n    cache 30\n", NodeAddress, ready)
	fmt.Fprintf(&b, "    kubernetes %s in-addr.arpa ip6.arpa {\n        kubeconfig %s\n        fallthrough in-addr.arpa ip6.arpa\n    }\n",
		ClusterDomain, kubeconfig)
	b.WriteString("    loop\n")
	if resolvConf != "" {
		fmt.Fprintf(&b, "    forward . %s\n", resolvConf)
	}
	b.WriteString("}\n")
	return b.String()
}

// grantCoreDNS lets CoreDNS's user read what it serves, as the system:coredns role of a
// kubeadm cluster does.
func grantCoreDNS(ctx context.Context, cs kubernetes.Interface) error {
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: coreDNSUser},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
		}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: coreDNSUser},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: coreDNSUser},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: coreDNSUser}}}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("granting CoreDNS its reads: %w", err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("granting CoreDNS its reads: %w", err)
	}
	return nil
}
