// Package command holds the skeleton that every caravan command follows,
// as kubectl's do: an Options type with Complete, Validate and Run, and
// the exit codes. It imports only cobra, so that the operator's commands
// share it without linking the CLI's.
package command

import (
	"context"

	"github.com/spf13/cobra"
)

// Command is what the Options of every command implement. Complete fills
// in what the flags and arguments leave out (defaults, the namespace, the
// clients), Validate refuses bad input with an error a user can act on
// before anything is changed, and Run does the work.
type Command interface {
	Complete() error
	Validate() error
	Run(ctx context.Context) error
}

// Run runs o's Complete, Validate and Run in order, stopping at the first
// error. An error of Validate exits with ExitUsage.
func Run(ctx context.Context, o Command) error {
	if err := o.Complete(); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return WithExitCode(ExitUsage, err)
	}
	return o.Run(ctx)
}

// RunE is a cobra RunE that runs o, for a command without positional
// arguments (a command with some keeps them in its Options first).
func RunE(o Command) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error { return Run(cmd.Context(), o) }
}
