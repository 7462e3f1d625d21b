// Package cmdutil holds what the CLI's commands share: the kube flags,
// printing, the operator checks, and the names of internal/command's
// skeleton (an Options type with Complete, Validate and Run) and exit codes.
package cmdutil

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/caravan-dev/caravan/internal/command"
)

// Command is what the Options of every command implement (command.Command).
type Command = command.Command

// Run runs o's Complete, Validate and Run in order, as command.Run does.
func Run(ctx context.Context, o Command) error { return command.Run(ctx, o) }

// RunE is a cobra RunE that runs o, as command.RunE does.
func RunE(o Command) func(*cobra.Command, []string) error { return command.RunE(o) }

// LogClientsToKlog sends controller-runtime's logs to klog. Without a
// logger, controller-runtime prints a stack trace after 30 seconds; only
// the first call takes effect.
func LogClientsToKlog() {
	ctrllog.SetLogger(klog.NewKlogr())
}
