// Package cmdutil holds what the CLI's commands share: the kube flags and the cluster preamble,
// printing, and the operator checks. Run runs a command of internal/command's skeleton (an
// Options type with Complete, Validate and Run) after its preamble.
package cmdutil

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/caravan-dev/caravan/internal/command"
)

// Run runs a command of the CLI: it fills in the cluster o needs when o is a ClusterCommand,
// the one preamble of every command, then runs o's Complete, Validate and Run as command.Run does.
func Run(ctx context.Context, o command.Command) error {
	if cc, ok := o.(ClusterCommand); ok {
		c, needs := cc.Preamble()
		if err := c.Connect(needs); err != nil {
			return err
		}
	}
	return command.Run(ctx, o)
}

// RunE is a cobra RunE that runs o with Run, for a command without positional arguments (a
// command with some keeps them in its Options first).
func RunE(o command.Command) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error { return Run(cmd.Context(), o) }
}

// LogClientsToKlog sends controller-runtime's logs to klog. Without a
// logger, controller-runtime prints a stack trace after 30 seconds; only
// the first call takes effect.
func LogClientsToKlog() {
	ctrllog.SetLogger(klog.NewKlogr())
}
