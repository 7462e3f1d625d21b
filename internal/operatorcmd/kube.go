package operatorcmd

import (
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Kube is where `caravan operator` finds its cluster: the cluster flags
// of the binary it runs in.
type Kube interface {
	// NamespaceFlag is -n/--namespace as given, or "".
	NamespaceFlag() string
	// Namespace is -n, else the kubeconfig context's namespace (in a pod,
	// its own), else default.
	Namespace() (string, error)
	// RESTConfig is the client configuration: the kubeconfig, or in a
	// pod its ServiceAccount's.
	RESTConfig() (*rest.Config, error)
}

// Flags are the operator image binary's --kubeconfig, --context and -n/--namespace.
// They are read as kubectl reads them, with client-go's loader alone: KUBECONFIG,
// ~/.kube/config, else the pod's in-cluster configuration.
type Flags struct {
	Kubeconfig    string
	Context       string
	NamespaceName string
}

// AddFlags registers the flags on fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "path to the kubeconfig file")
	fs.StringVar(&f.Context, "context", "", "the kubeconfig context to use")
	fs.StringVarP(&f.NamespaceName, "namespace", "n", "", "the operator's namespace")
}

func (f *Flags) loader() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.Context}
	overrides.Context.Namespace = f.NamespaceName
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
}

// NamespaceFlag is -n as given.
func (f *Flags) NamespaceFlag() string { return f.NamespaceName }

// Namespace is -n, else the context's namespace, else default.
func (f *Flags) Namespace() (string, error) {
	ns, _, err := f.loader().Namespace()
	if err != nil {
		return "", fmt.Errorf("finding the namespace: %w", err)
	}
	return ns, nil
}

// RESTConfig loads the client configuration.
func (f *Flags) RESTConfig() (*rest.Config, error) {
	cfg, err := f.loader().ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the cluster configuration: %w", err)
	}
	return cfg, nil
}
