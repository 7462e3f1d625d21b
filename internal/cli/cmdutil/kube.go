package cmdutil

import (
	"errors"
	"fmt"
	"os"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
)

// KubeFlags are the kubectl flags every cluster command shares
// (--kubeconfig, --context, -n/--namespace, ...), registered once on the
// root command.
type KubeFlags struct {
	*genericclioptions.ConfigFlags
}

// NewKubeFlags returns the flags with kubectl's defaults.
func NewKubeFlags() *KubeFlags {
	return &KubeFlags{ConfigFlags: genericclioptions.NewConfigFlags(true)}
}

// errNoKubeconfig says that no kubeconfig names a cluster, and where one can come from.
var errNoKubeconfig = errors.New("no cluster to talk to: no kubeconfig was found (KUBECONFIG, --kubeconfig or ~/.kube/config); " +
	"point one at a cluster, or start a local one with caravan local up")

// RESTConfig loads the client configuration. Without a kubeconfig, --server or an in-cluster
// service account it fails saying so, rather than dialling kubectl's default localhost:8080.
func (f *KubeFlags) RESTConfig() (*rest.Config, error) {
	raw, err := f.ToRawKubeConfigLoader().RawConfig()
	if err == nil && len(raw.Contexts) == 0 && (f.APIServer == nil || *f.APIServer == "") && os.Getenv("KUBERNETES_SERVICE_HOST") == "" {
		return nil, errNoKubeconfig
	}
	cfg, err := f.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the cluster configuration: %w", err)
	}
	return cfg, nil
}

// Namespace is -n, else the kubeconfig context's namespace, else default.
func (f *KubeFlags) Namespace() (string, error) {
	ns, _, err := f.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("finding the namespace: %w", err)
	}
	return ns, nil
}

// NamespaceFlag is -n as given, or "".
func (f *KubeFlags) NamespaceFlag() string { return *f.ConfigFlags.Namespace }
