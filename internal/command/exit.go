package command

import "errors"

// The exit codes of caravan, which docs/cli.md lists: a script tells a refused command from a
// wait that ran out of time, both from an integration that failed, and a missing resource from
// a missing right.
const (
	// ExitFailure is any other failure.
	ExitFailure = 1
	// ExitUsage is a command refused before it acted: unknown flags, wrong arguments, bad values.
	ExitUsage = 2
	// ExitTimeout is a --wait that ran out of time; what was applied stays.
	ExitTimeout = 3
	// ExitFailed is a --wait that saw an integration reach phase Error.
	ExitFailed = 4
	// ExitNotFound is a resource the command names that the cluster does not have.
	ExitNotFound = 5
	// ExitForbidden is a request the cluster refused for want of a right (HTTP 403).
	ExitForbidden = 6
)

// ExitError is an error that gives the process its exit code.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// WithExitCode wraps err, when not nil, so that the process exits with code.
func WithExitCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &ExitError{Code: code, Err: err}
}

// ExitCode is the exit code for err: 0 for none, the code it carries, else ExitFailure.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var e *ExitError
	if errors.As(err, &e) {
		return e.Code
	}
	return ExitFailure
}
