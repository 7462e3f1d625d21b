package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/caravan-dev/caravan/internal/procnode"
)

// NodeOptions are the options of `caravan local node`, the process node
// the local cluster starts.
type NodeOptions struct {
	Name        string
	Dir         string
	Kubeconfig  string
	ServingCert string
	ServingKey  string
}

func newCmdNode() *cobra.Command {
	o := &NodeOptions{}
	cmd := &cobra.Command{
		Use:    "node",
		Short:  "Run the local cluster's process node (started by local up)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Name == "" || o.Dir == "" || o.Kubeconfig == "" {
				return errors.New("--name, --dir and --kubeconfig are required")
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Name, "name", "", "name of the Node")
	f.StringVar(&o.Dir, "dir", "", "directory of the node's images, pods and logs")
	f.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig of the node's identity")
	f.StringVar(&o.ServingCert, "tls-cert-file", "", "certificate of the log endpoint")
	f.StringVar(&o.ServingKey, "tls-private-key-file", "", "key of the log endpoint")
	return cmd
}

// Run runs the node until ctx ends.
func (o *NodeOptions) Run(ctx context.Context) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return err
	}
	self, err := executable()
	if err != nil {
		return err
	}
	return procnode.Run(ctx, procnode.Config{Name: o.Name, Dir: o.Dir, RESTConfig: cfg,
		InitBinary: self, InitArgs: []string{"local", procnode.InitCommand},
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
