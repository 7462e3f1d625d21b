package cmdutil

import (
	"errors"
	"fmt"
	"net"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/caravan-dev/caravan/internal/command"
)

// Explain rewrites a command's error for the user: an API server of f that cannot be reached is
// named with what to check, and an API error of a missing resource or a missing right gets its
// exit code.
func (f *KubeFlags) Explain(err error) error {
	if err == nil {
		return nil
	}
	var unreachable *unreachableError
	if !errors.As(err, &unreachable) {
		if u := asUnreachable(err, f.serverHost()); u != nil {
			err = u
		}
	}
	var exit *command.ExitError
	switch {
	case errors.As(err, &exit):
		return err
	case apierrors.IsNotFound(err):
		return command.WithExitCode(command.ExitNotFound, err)
	case apierrors.IsForbidden(err):
		return command.WithExitCode(command.ExitForbidden, err)
	}
	return err
}

// unreachableError is a request that did not reach the API server, or had no answer in time.
type unreachableError struct {
	// server is the API server's address, scheme and host.
	server string
	// timeout tells that the server did not answer in time, rather than not being reached.
	timeout bool
	// cause is the network's error.
	cause error
	// err is the command's error.
	err error
}

func (e *unreachableError) Error() string {
	if e.timeout {
		return fmt.Sprintf("the Kubernetes API server %s did not answer in time (%v): check that it runs and that this "+
			"machine reaches it, or give it longer with --request-timeout", e.server, e.cause)
	}
	return fmt.Sprintf("cannot reach the Kubernetes API server %s (%v): check that the cluster runs and that "+
		"the kubeconfig's context, or --context or --server, names its address (kubectl config view --minify shows it)",
		e.server, e.cause)
}

func (e *unreachableError) Unwrap() error { return e.err }

// serverHost is the host, and port, of the API server the flags name, or "" when they name none.
func (f *KubeFlags) serverHost() string {
	cfg, err := f.ToRESTConfig()
	if err != nil {
		return ""
	}
	if u, err := url.Parse(cfg.Host); err == nil && u.Host != "" {
		return u.Host
	}
	return cfg.Host
}

// asUnreachable is err as an unreachableError when a request of err to the API server host found
// no server, else nil. Requests to other servers (a registry, a route's URL) are left as they are.
func asUnreachable(err error, host string) *unreachableError {
	var u *url.Error
	if host == "" || !errors.As(err, &u) {
		return nil
	}
	parsed, perr := url.Parse(u.URL)
	if perr != nil || parsed.Host != host {
		return nil
	}
	server := parsed.Scheme + "://" + parsed.Host
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.As(u.Err, &dns):
		return &unreachableError{server: server, cause: dns, err: err}
	case errors.As(u.Err, &op) && op.Op == "dial":
		cause := op.Err
		if cause == nil {
			cause = op
		}
		return &unreachableError{server: server, cause: cause, err: err}
	case u.Timeout():
		return &unreachableError{server: server, timeout: true, cause: u.Err, err: err}
	}
	return nil
}
