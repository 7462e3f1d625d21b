package cmdutil

import (
	"errors"
	"fmt"
	"os"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/internal/scheme"
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

// Client returns a client with Caravan's scheme.
func (f *KubeFlags) Client() (client.Client, error) {
	cfg, err := f.RESTConfig()
	if err != nil {
		return nil, err
	}
	LogClientsToKlog()
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster: %w", err)
	}
	return c, nil
}

// NamespaceAndClient is Namespace and Client: the preamble of the commands that read or write
// one namespace.
func (f *KubeFlags) NamespaceAndClient() (string, client.Client, error) {
	ns, err := f.Namespace()
	if err != nil {
		return "", nil, err
	}
	c, err := f.Client()
	return ns, c, err
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
