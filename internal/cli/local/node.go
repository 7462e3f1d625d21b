package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
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
	return nil
}

// Run runs the node until ctx ends.
func (o *NodeOptions) Run(ctx context.Context) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return err
	}
	return procnode.Run(ctx, procnode.Config{Name: o.Name, Dir: o.Dir, KeptVolumes: o.KeptVolumes, RESTConfig: cfg,
		InitBinary: o.self, InitArgs: []string{"local", procnode.InitCommand},
		ServingCert: o.ServingCert, ServingKey: o.ServingKey})
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
