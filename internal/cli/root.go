// Package cli holds Caravan's commands. Each command is an Options struct
// with Complete, Validate and Run, built by a NewCmdX function.
package cli

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/caravan-dev/caravan/internal/cli/local"
)

// NewRootCommand builds the caravan command tree.
func NewRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:   "caravan",
		Short: "Run Apache Camel integrations on Kubernetes, with many operators on one cluster",
		Long: `Caravan runs Apache Camel integrations on Kubernetes with the camel.apache.org
resources of Camel K. Each operator has an id and owns the integrations whose
camel.apache.org/operator.id annotation names it.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	kube := NewKubeFlags()
	kube.AddFlags(root.PersistentFlags())
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.AddCommand(
		local.NewCmdLocal(streams),
		newCmdOperator(kube, streams),
		newCmdRun(kube, streams),
		newCmdBind(kube, streams),
		newCmdDelete(kube, streams),
		newCmdRebuild(kube, streams),
		newCmdReassign(kube, streams),
		newCmdInstall(kube, streams),
		newCmdUninstall(kube, streams),
		newCmdGet(kube, streams),
		newCmdDescribe(kube, streams),
		newCmdOperators(kube, streams),
		newCmdCompletion(kube, streams),
		newCmdVersion(kube, streams),
		newCmdBench(kube, streams),
	)
	return root
}
