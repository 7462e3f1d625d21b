package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/debimage"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// DownOptions are the options of `caravan local down`.
type DownOptions struct{ dirOptions }

func newCmdDown(streams genericiooptions.IOStreams) *cobra.Command {
	o := &DownOptions{dirOptions{IOStreams: streams}}
	cmd := &cobra.Command{
		Use:     "down",
		Short:   "Stop the local cluster and remove its state",
		Example: "  caravan local down",
		Args:    cobra.NoArgs,
		RunE:    cmdutil.RunE(o),
	}
	o.add(cmd)
	return cmd
}

// Run stops every process of the cluster and removes its directory.
func (o *DownOptions) Run(context.Context) error {
	c, err := localcluster.Load(o.Dir)
	if errors.Is(err, localcluster.ErrNotRunning) {
		fmt.Fprintf(o.Out, "No local cluster in %s.\n", o.Dir)
		return nil
	}
	if err != nil {
		return err
	}
	if err := c.Destroy(); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "Stopped the local cluster and removed %s.\n", o.Dir)
	return nil
}

// StatusOptions are the options of `caravan local status`.
type StatusOptions struct{ dirOptions }

func newCmdStatus(streams genericiooptions.IOStreams) *cobra.Command {
	o := &StatusOptions{dirOptions{IOStreams: streams}}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show which processes of the local cluster run",
		Long: `Show which processes of the local cluster run. Exits with a non-zero status
when there is no cluster or when one of its processes has stopped.`,
		Example: "  caravan local status",
		Args:    cobra.NoArgs,
		RunE:    cmdutil.RunE(o),
	}
	o.add(cmd)
	return cmd
}

// Run prints one line per component.
func (o *StatusOptions) Run(context.Context) error {
	c, err := localcluster.Load(o.Dir)
	if errors.Is(err, localcluster.ErrNotRunning) {
		return fmt.Errorf("no local cluster in %s; start one with `caravan local up`", o.Dir)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "Local cluster in %s, server %s, started %s\n\n", c.Dir, c.Server, c.StartedAt.Format("2006-01-02 15:04:05"))
	w := tabwriter.NewWriter(o.Out, 0, 4, 3, ' ', 0)
	fmt.Fprintln(w, "COMPONENT\tPID\tSTATUS\tLOG")
	stopped := 0
	for _, p := range c.Processes {
		status := "running"
		if !p.Alive() {
			status = "stopped"
			stopped++
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\n", p.Name, p.PID, status, p.Log)
	}
	_ = w.Flush()
	if stopped > 0 {
		return fmt.Errorf("%d of %d components have stopped; see their logs, then `caravan local down` and `caravan local up`", stopped, len(c.Processes))
	}
	return nil
}

// KubeconfigOptions are the options of `caravan local kubeconfig`.
type KubeconfigOptions struct{ dirOptions }

func newCmdKubeconfig(streams genericiooptions.IOStreams) *cobra.Command {
	o := &KubeconfigOptions{dirOptions{IOStreams: streams}}
	cmd := &cobra.Command{
		Use:     "kubeconfig",
		Short:   "Print the path of the local cluster's kubeconfig file",
		Example: "  export KUBECONFIG=$(caravan local kubeconfig)",
		Args:    cobra.NoArgs,
		RunE:    cmdutil.RunE(o),
	}
	o.add(cmd)
	return cmd
}

// Run prints the path.
func (o *KubeconfigOptions) Run(context.Context) error {
	c, err := loadRunning(o.Dir)
	if err != nil {
		return err
	}
	fmt.Fprintln(o.Out, c.Kubeconfig)
	return nil
}

// BuildOptions are the options of `caravan local build`.
type BuildOptions struct {
	dirOptions
	// Node is the kind of node whose binaries are built besides the control plane's.
	Node string
}

func newCmdBuild(streams genericiooptions.IOStreams) *cobra.Command {
	o := &BuildOptions{dirOptions: dirOptions{IOStreams: streams}, Node: nodeAuto}
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Build the local cluster's binaries and images into the cache, without starting anything",
		Example: `  # Prepare a machine (for example in CI) before running tests
  caravan local build

  # Also build the kubelet node's kubelet, kube-proxy, containerd, runc and CNI plugins (as
  # root, local build does it unasked)
  caravan local build --node kubelet`,
		Args: cobra.NoArgs,
		RunE: cmdutil.RunE(o),
	}
	o.add(cmd)
	cmd.Flags().StringVar(&o.Node, "node", o.Node, "the node whose binaries are built too: kubelet, process (nothing more to build), "+
		"or auto (the node local up would start: kubelet as root, else process)")
	return cmd
}

// Validate checks the flags.
func (o *BuildOptions) Validate() error {
	_, _, err := chooseNode(o.Node, true)
	return err
}

// Run builds what is missing and prints where each binary is.
func (o *BuildOptions) Run(ctx context.Context) error {
	bins, err := localcluster.EnsureBinaries(ctx, o.CacheDir, o.ErrOut)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(o.Out, 0, 4, 2, ' ', 0)
	for _, row := range [][2]string{
		{"etcd", bins.Etcd}, {"kube-apiserver", bins.APIServer},
		{"kube-controller-manager", bins.ControllerManager}, {"kube-scheduler", bins.Scheduler},
		{"kubectl", bins.Kubectl}, {"kwok", bins.Kwok}, {"registry", bins.Registry},
	} {
		fmt.Fprintf(w, "%s\t%s\n", row[0], row[1])
	}
	if node, _, _ := chooseNode(o.Node, true); node == localcluster.NodeKubelet {
		node, err := localcluster.EnsureNodeBinaries(ctx, o.CacheDir, o.ErrOut)
		if err != nil {
			return err
		}
		for _, row := range [][2]string{
			{"kubelet", node.Kubelet}, {"kube-proxy", node.KubeProxy}, {"containerd", node.Containerd},
			{"runc", node.Runc}, {"pause", node.Pause}, {"nft", node.Nft}, {"coredns", node.CoreDNS},
		} {
			fmt.Fprintf(w, "%s\t%s\n", row[0], row[1])
		}
	}
	for _, di := range runtime.Images {
		img, err := debimage.BuildCached(ctx, o.CacheDir, di, o.ErrOut)
		if err != nil {
			return err
		}
		digest, err := img.Digest()
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s\t%s (%s)\n", di.Repository, digest, debimage.CacheDir(o.CacheDir))
	}
	return w.Flush()
}

// KubectlOptions are the options of `caravan local kubectl`.
type KubectlOptions struct {
	dirOptions
	Args []string
}

func newCmdKubectl(streams genericiooptions.IOStreams) *cobra.Command {
	o := &KubectlOptions{dirOptions: dirOptions{IOStreams: streams}}
	cmd := &cobra.Command{
		Use:   "kubectl -- ARGS...",
		Short: "Run the kubectl built with the local cluster against it",
		Example: `  caravan local kubectl -- get nodes
  caravan local kubectl -- get integrations -A`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Args = args
			return cmdutil.Run(cmd.Context(), o)
		},
	}
	o.add(cmd)
	return cmd
}

// Run runs kubectl with the cluster's kubeconfig; its exit status becomes
// the command's error.
func (o *KubectlOptions) Run(ctx context.Context) error {
	c, err := loadRunning(o.Dir)
	if err != nil {
		return err
	}
	bins, missing := localcluster.FindBinaries(o.CacheDir)
	if len(missing) > 0 {
		return fmt.Errorf("kubectl is not built yet; run `caravan local build`")
	}
	cmd := exec.CommandContext(ctx, bins.Kubectl, o.Args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.In, o.Out, o.ErrOut
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kubectl %v: %w", o.Args, err)
	}
	return nil
}
