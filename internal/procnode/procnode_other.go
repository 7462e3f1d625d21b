//go:build !linux

package procnode

import (
	"errors"
	"syscall"
)

// errNotLinux says why the process node does not run here.
var errNotLinux = errors.New("the process node runs pods in Linux namespaces: it runs on Linux only")

// confine refuses: containers are confined by Linux namespaces.
func confine(containerSpec) error { return errNotLinux }

// confinement is nil off Linux, where Run refuses to start the node.
func confinement() *syscall.SysProcAttr { return nil }
