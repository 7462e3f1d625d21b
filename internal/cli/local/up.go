package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"text/tabwriter"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/localcluster"
)

// UpOptions are the options of `caravan local up`.
type UpOptions struct {
	dirOptions
	Nodes    int
	Registry bool
	// Node is the kind of node that runs the operator, builder and kit pods.
	Node string
}

func newCmdUp(streams genericiooptions.IOStreams) *cobra.Command {
	o := &UpOptions{dirOptions: dirOptions{IOStreams: streams}, Nodes: 1, Registry: true, Node: nodeAuto}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start the local cluster (building its binaries on first use)",
		Example: `  # Start a cluster with one simulated node, then use it
  caravan local up
  export KUBECONFIG=$(caravan local kubeconfig)

  # Start a cluster with three nodes in a directory of your own
  caravan local up --nodes 3 --dir /tmp/caravan-local

  # Run the pods as processes of this machine even as root
  caravan local up --node process`,
		Args: cobra.NoArgs,
		RunE: cmdutil.RunE(o),
	}
	o.add(cmd)
	cmd.Flags().IntVar(&o.Nodes, "nodes", o.Nodes, "number of simulated (kwok) nodes")
	cmd.Flags().BoolVar(&o.Registry, "registry", o.Registry, "run the cluster's registry, which serves the operator image and kits")
	cmd.Flags().StringVar(&o.Node, "node", o.Node, "the node that runs operator, builder and kit pods: kubelet (a real kubelet with "+
		"containerd and a bridge network; needs root), process (pods as processes of this machine), or auto (kubelet as root, else process)")
	return cmd
}

// nodeAuto picks the kubelet node where it can run, the process node elsewhere.
const nodeAuto = "auto"

// chooseNode is the node that the --node flag's value asks for, and why; an error for a value
// that is none of auto, kubelet and process. registry tells whether the cluster runs its
// registry, which the kubelet node pulls its sandbox image from.
func chooseNode(flag string, registry bool) (localcluster.NodeKind, string, error) {
	switch kind := localcluster.NodeKind(flag); {
	case kind == localcluster.NodeProcess || kind == localcluster.NodeKubelet:
		return kind, "asked for with --node " + flag, nil
	case flag != nodeAuto:
		return "", "", fmt.Errorf("--node must be auto, kubelet or process, got %q", flag)
	case goruntime.GOOS != "linux":
		return localcluster.NodeProcess, "the kubelet node runs on Linux only", nil
	case os.Geteuid() != 0:
		return localcluster.NodeProcess, "the kubelet node needs root (sudo caravan local up runs it)", nil
	case !registry:
		return localcluster.NodeProcess, "the kubelet node pulls its sandbox image from the registry, which --registry=false leaves out", nil
	}
	return localcluster.NodeKubelet, "caravan runs as root (--node process starts the process node instead)", nil
}

// Validate checks the flags.
func (o *UpOptions) Validate() error {
	if o.Nodes < 1 || o.Nodes > 100 {
		return fmt.Errorf("--nodes must be between 1 and 100, got %d", o.Nodes)
	}
	node, _, err := chooseNode(o.Node, o.Registry)
	if err != nil || node != localcluster.NodeKubelet {
		return err
	}
	if !o.Registry {
		return errors.New("--node kubelet needs the registry: it pulls the pod sandbox image from it")
	}
	if os.Geteuid() != 0 {
		return errors.New("--node kubelet needs root: the kubelet makes network namespaces, a bridge and cgroups; " +
			"run caravan as root, or use --node process")
	}
	return nil
}

// Run starts the cluster, unless one already runs from the same directory.
func (o *UpOptions) Run(ctx context.Context) error {
	if c, err := localcluster.Load(o.Dir); err == nil && c.AnyAlive() {
		fmt.Fprintf(o.Out, "A local cluster already runs from %s; not starting another.\n", o.Dir)
		printUsage(o.Out, c)
		return nil
	} else if err == nil {
		// A cluster that is recorded but no longer runs (the machine
		// restarted, say) is cleaned up and started afresh.
		if err := c.Destroy(); err != nil {
			return fmt.Errorf("cleaning up the stopped cluster in %s: %w", o.Dir, err)
		}
	} else if !errors.Is(err, localcluster.ErrNotRunning) {
		return err
	}
	bins, err := localcluster.EnsureBinaries(ctx, o.CacheDir, o.ErrOut)
	if err != nil {
		return err
	}
	node, why, err := chooseNode(o.Node, o.Registry)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.ErrOut, "the real pods run on the %s node: %s\n", node, why)
	var nodeBins localcluster.NodeBinaries
	if node == localcluster.NodeKubelet {
		if nodeBins, err = localcluster.EnsureNodeBinaries(ctx, o.CacheDir, o.ErrOut); err != nil {
			return err
		}
	}
	fmt.Fprintf(o.ErrOut, "starting the local cluster in %s\n", o.Dir)
	self, err := executable()
	if err != nil {
		return err
	}
	c, err := localcluster.Start(ctx, localcluster.Options{
		Dir: o.Dir, Binaries: bins, Full: true, Nodes: o.Nodes, Progress: o.ErrOut, Registry: o.Registry, CacheDir: o.CacheDir,
		NodeBinary: self, KeptVolumes: filepath.Join(o.CacheDir, "volumes"),
		Node: node, NodeBinaries: nodeBins,
	})
	if err != nil && o.Node == nodeAuto && node == localcluster.NodeKubelet {
		return fmt.Errorf("%w\n(the kubelet node was chosen because caravan runs as root; --node process starts the process node instead)", err)
	}
	if err != nil {
		return err
	}
	if err := installCRDs(ctx, c); err != nil {
		// A cluster without Caravan's API is not what was asked for.
		return errors.Join(fmt.Errorf("installing Caravan's CustomResourceDefinitions: %w", err), c.Destroy())
	}
	fmt.Fprintln(o.ErrOut, "  Caravan's CustomResourceDefinitions installed")
	fmt.Fprintln(o.Out, "The local cluster is running.")
	printUsage(o.Out, c)
	return nil
}

func installCRDs(ctx context.Context, c *localcluster.Cluster) error {
	cfg, err := c.RESTConfig()
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return err
	}
	cmdutil.LogClientsToKlog()
	cl, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	return install.ApplyCRDs(ctx, cl)
}

func printUsage(out io.Writer, c *localcluster.Cluster) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "  server:\t%s\n", c.Server)
	if c.Node == localcluster.NodeKubelet {
		fmt.Fprintf(w, "  nodes:\t%d simulated (kwok), and %s (a kubelet with containerd: runs operator, builder and kit pods in containers)\n",
			c.Nodes, localcluster.KubeletNodeName)
	} else {
		fmt.Fprintf(w, "  nodes:\t%d simulated (kwok), and %s (runs operator, builder and kit pods as processes)\n", c.Nodes, localcluster.ProcessNodeName)
	}
	fmt.Fprintf(w, "  kubeconfig:\t%s\n", c.Kubeconfig)
	if c.RegistryAddress != "" {
		fmt.Fprintf(w, "  registry:\t%s (the operator image and kits are pushed here)\n", c.RegistryAddress)
	}
	_ = w.Flush()
	fmt.Fprintf(out, `
Use it with kubectl:
  export KUBECONFIG=%s
  kubectl get nodes
or with the kubectl that Caravan built:
  caravan local kubectl -- get nodes
Stop it and remove its state with:
  caravan local down
`, c.Kubeconfig)
}
