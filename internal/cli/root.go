// Package cli holds Caravan's commands. Each command is an Options struct
// with Complete, Validate and Run, built by a NewCmdX function.
package cli

import (
	"context"

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

// command is what the Options of a command implement, as kubectl's do.
type command interface {
	Complete() error
	Validate() error
	Run(ctx context.Context) error
}

// completeValidateRun runs a command's steps in order, stopping at the
// first error.
func completeValidateRun(ctx context.Context, o command) error {
	if err := o.Complete(); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return err
	}
	return o.Run(ctx)
}
