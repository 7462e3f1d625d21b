package cmdutil

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/caravan-dev/caravan/internal/command"
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
	if err := f.checkKubeconfig(); err != nil {
		return nil, err
	}
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
	if err := f.checkKubeconfig(); err != nil {
		return "", err
	}
	ns, _, err := f.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("finding the namespace: %w", err)
	}
	return ns, nil
}

// checkKubeconfig refuses a --kubeconfig file that does not exist, and a context the kubeconfig
// lacks, naming the contexts it has; client-go's errors name neither.
func (f *KubeFlags) checkKubeconfig() error {
	if path := *f.KubeConfig; path != "" {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return command.WithExitCode(command.ExitUsage, fmt.Errorf("--kubeconfig %s: the file does not exist: give the path of "+
				"a kubeconfig, or leave --kubeconfig out to read KUBECONFIG or ~/.kube/config", path))
		}
	}
	loader := f.ToRawKubeConfigLoader()
	raw, err := loader.RawConfig()
	if err != nil {
		return fmt.Errorf("reading the kubeconfig: %w", err)
	}
	name := *f.Context
	if name == "" {
		name = raw.CurrentContext
	}
	if name == "" || raw.Contexts[name] != nil {
		return nil
	}
	has := "it has no contexts"
	if len(raw.Contexts) > 0 {
		has = "its contexts are " + strings.Join(slices.Sorted(maps.Keys(raw.Contexts)), ", ")
	}
	files := kubeconfigFiles(loader.ConfigAccess())
	if *f.Context != "" {
		return command.WithExitCode(command.ExitUsage, fmt.Errorf("--context %s: no such context in the kubeconfig (%s): "+
			"%s; give one of them to --context", name, files, has))
	}
	return command.WithExitCode(command.ExitUsage, fmt.Errorf("the kubeconfig's current context %s is not one of its contexts (%s): "+
		"%s; give one of them to --context, or make one current with kubectl config use-context NAME", name, files, has))
}

// kubeconfigFiles names the kubeconfig files that access reads and that exist.
func kubeconfigFiles(access clientcmd.ConfigAccess) string {
	var files []string
	if explicit := access.GetExplicitFile(); explicit != "" {
		files = append(files, explicit)
	} else {
		for _, file := range access.GetLoadingPrecedence() {
			if _, err := os.Stat(file); err == nil {
				files = append(files, file)
			}
		}
	}
	if len(files) == 0 {
		return "none read"
	}
	return strings.Join(files, ", ")
}

// NamespaceFlag is -n as given, or "".
func (f *KubeFlags) NamespaceFlag() string { return *f.ConfigFlags.Namespace }
