package cmdutil

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/internal/scheme"
)

// Needs says what of the cluster a command uses; Run fills it in before the command's Complete.
type Needs uint8

const (
	// NeedNamespace fills Cluster.Namespace.
	NeedNamespace Needs = 1 << iota
	// NeedConfig fills Cluster.Config, the client configuration.
	NeedConfig
	// NeedClient fills Cluster.Client, which reads and writes with Caravan's scheme.
	NeedClient
	// NeedWatch fills Cluster.Watch, a client that also watches, and Cluster.Client with it.
	NeedWatch
	// NeedPods fills Cluster.Pods, client-go's clientset, which reads pods and their logs.
	NeedPods
)

// Cluster is the preamble of every command that talks to a cluster: the kubectl flags, and what
// Run fills in from them (Connect), as the command's Needs ask, before its Complete. A command
// without a need leaves the cluster alone: a client-side dry run works with no cluster at all.
type Cluster struct {
	// Kube are the kubectl flags, shared by every command.
	Kube *KubeFlags

	// Namespace is -n, else the kubeconfig context's, else default (NeedNamespace).
	Namespace string
	// Config is the client configuration (NeedConfig, or any client).
	Config *rest.Config
	// Client reads and writes with Caravan's scheme (NeedClient or NeedWatch).
	Client client.Client
	// Watch is Client when it can also watch (NeedWatch).
	Watch client.WithWatch
	// Pods is client-go's clientset (NeedPods).
	Pods kubernetes.Interface
}

// ClusterCommand is a command that talks to a cluster: Run fills in its Cluster first.
type ClusterCommand interface {
	// Preamble returns the command's Cluster and what the command needs of it, which may depend
	// on its flags.
	Preamble() (*Cluster, Needs)
}

// Connect fills in what needs asks for that c does not hold yet. Run calls it with the
// command's Needs; a command that talks to the cluster only after it checked its input (a
// client-side dry run needs no cluster) calls it from its Run.
func (c *Cluster) Connect(needs Needs) error {
	var err error
	if needs&NeedNamespace != 0 && c.Namespace == "" {
		if c.Namespace, err = c.Kube.Namespace(); err != nil {
			return err
		}
	}
	watch := needs&NeedWatch != 0 && c.Watch == nil || needs&NeedClient != 0 && c.Client == nil
	pods := needs&NeedPods != 0 && c.Pods == nil
	if (needs&NeedConfig != 0 || watch || pods) && c.Config == nil {
		if c.Config, err = c.Kube.RESTConfig(); err != nil {
			return err
		}
	}
	if watch {
		LogClientsToKlog()
		if c.Watch, err = client.NewWithWatch(c.Config, client.Options{Scheme: scheme.New()}); err != nil {
			return fmt.Errorf("connecting to the cluster: %w", err)
		}
		c.Client = c.Watch
	}
	if pods {
		if c.Pods, err = kubernetes.NewForConfig(c.Config); err != nil {
			return fmt.Errorf("connecting to the cluster: %w", err)
		}
	}
	return nil
}
