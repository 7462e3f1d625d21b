package local

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/procnode"
)

// NodeOptions are the options of `caravan local node`, the process node
// the local cluster starts.
type NodeOptions struct {
	Name        string
	Dir         string
	KeptVolumes string
	Kubeconfig  string
	ServingCert string
	ServingKey  string
	// PlacementAddress, when set, serves the placement webhook there, for pods of images
	// in Registry (localcluster.PlacementWebhook).
	PlacementAddress string
	Registry         string

	// self is the path of this binary, set by Complete.
	self string
}

func newCmdNode() *cobra.Command {
	o := &NodeOptions{}
	cmd := &cobra.Command{
		Use:    "node",
		Short:  "Run the local cluster's process node (started by local up)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE:   cmdutil.RunE(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.Name, "name", "", "name of the Node")
	f.StringVar(&o.Dir, "dir", "", "directory of the node's images, pods and logs")
	f.StringVar(&o.KeptVolumes, "kept-volumes", "", "directory of the volumes kept across clusters (claims annotated "+procnode.KeptAnnotation+")")
	f.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig of the node's identity")
	f.StringVar(&o.ServingCert, "tls-cert-file", "", "certificate of the log endpoint")
	f.StringVar(&o.ServingKey, "tls-private-key-file", "", "key of the log endpoint")
	f.StringVar(&o.PlacementAddress, "placement-webhook-address", "", "serve the pod placement webhook on this address, with the log endpoint's key pair")
	f.StringVar(&o.Registry, "registry", "", "the local registry, whose images the placement webhook sends to this node")
	return cmd
}

// Complete finds this binary, which each pod's processes start from.
func (o *NodeOptions) Complete() error {
	var err error
	o.self, err = executable()
	return err
}

// Validate checks that the flags local up passes are all there.
func (o *NodeOptions) Validate() error {
	if o.Name == "" || o.Dir == "" || o.Kubeconfig == "" {
		return errors.New("--name, --dir and --kubeconfig are required")
	}
	if o.PlacementAddress != "" && (o.ServingCert == "" || o.ServingKey == "") {
		return errors.New("--placement-webhook-address needs --tls-cert-file and --tls-private-key-file")
	}
	return nil
}

// Run runs the node until ctx ends.
func (o *NodeOptions) Run(ctx context.Context) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return err
	}
	if o.PlacementAddress != "" {
		if err := o.servePlacement(ctx, cfg); err != nil {
			return err
		}
	}
	return procnode.Run(ctx, procnode.Config{Name: o.Name, Dir: o.Dir, KeptVolumes: o.KeptVolumes, RESTConfig: cfg,
		InitBinary: o.self, InitArgs: []string{"local", procnode.InitCommand},
		ServingCert: o.ServingCert, ServingKey: o.ServingKey})
}

// servePlacement serves the placement webhook over TLS until ctx ends.
func (o *NodeOptions) servePlacement(ctx context.Context, cfg *rest.Config) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	hook, err := localcluster.NewPlacementWebhook(ctx, cs, o.Registry)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(localcluster.PlacementWebhookPath, hook)
	l, err := net.Listen("tcp", o.PlacementAddress)
	if err != nil {
		return fmt.Errorf("serving the placement webhook: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.ServeTLS(l, o.ServingCert, o.ServingKey) }()
	go func() { <-ctx.Done(); _ = srv.Close() }()
	return nil
}

func newCmdContainerInit() *cobra.Command {
	return &cobra.Command{
		Use:    procnode.InitCommand + " SPEC",
		Short:  "Confine this process as a container of the process node, and run it",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE:   func(_ *cobra.Command, args []string) error { return procnode.Init(args[0]) },
	}
}

// executable is the running caravan binary, symlinks resolved.
func executable() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(self)
}

// ProvisionerOptions are the options of `caravan local provisioner`, which provisions the
// kubelet node's volumes.
type ProvisionerOptions struct {
	Node        string
	Dir         string
	KeptVolumes string
	Kubeconfig  string
}

func newCmdProvisioner() *cobra.Command {
	o := &ProvisionerOptions{}
	cmd := &cobra.Command{
		Use:    "provisioner",
		Short:  "Provision the kubelet node's volumes as directories of this machine (started by local up)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE:   cmdutil.RunE(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.Node, "node", "", "name of the Node that mounts the volumes")
	f.StringVar(&o.Dir, "dir", "", "directory of the volumes")
	f.StringVar(&o.KeptVolumes, "kept-volumes", "", "directory of the volumes kept across clusters (claims annotated "+procnode.KeptAnnotation+")")
	f.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig of the provisioner's identity")
	return cmd
}

// Complete has nothing to complete.
func (o *ProvisionerOptions) Complete() error { return nil }

// Validate checks that the flags local up passes are all there.
func (o *ProvisionerOptions) Validate() error {
	if o.Node == "" || o.Dir == "" || o.Kubeconfig == "" {
		return errors.New("--node, --dir and --kubeconfig are required")
	}
	return nil
}

// Run provisions volumes until ctx ends.
func (o *ProvisionerOptions) Run(ctx context.Context) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	procnode.RunProvisioner(ctx, cs, o.Node, o.Dir, o.KeptVolumes)
	return nil
}
