// Package cli holds Caravan's commands. Each command is an Options struct
// with Complete, Validate and Run (cmdutil.Command), built by a newCmdX
// function whose RunE runs them with cmdutil.Run.
package cli

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
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
	root.AddCommand(commands(kube, streams)...)
	return root
}
