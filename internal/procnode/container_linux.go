package procnode

import (
	"os"
	"syscall"
)

// confinement is how the init starts: its own mount and UTS namespaces and process
// group, killed with the node; without root, also its own user namespace
// in which the node's user is root.
func confinement() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if os.Getuid() != 0 {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	}
	return attr
}
