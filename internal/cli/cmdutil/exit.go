package cmdutil

import "github.com/caravan-dev/caravan/internal/command"

// The exit codes of caravan, as internal/command defines them.
const (
	ExitFailure = command.ExitFailure
	ExitUsage   = command.ExitUsage
	ExitTimeout = command.ExitTimeout
	ExitFailed  = command.ExitFailed
)

// ExitError is an error that gives the process its exit code.
type ExitError = command.ExitError

// WithExitCode wraps err, when not nil, so that the process exits with code.
func WithExitCode(code int, err error) error { return command.WithExitCode(code, err) }

// ExitCode is the exit code for err: 0 for none, the code it carries, else ExitFailure.
func ExitCode(err error) int { return command.ExitCode(err) }
