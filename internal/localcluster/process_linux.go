package localcluster

import "syscall"

// DieWithParent has the process killed when the process that started it ends.
func DieWithParent(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
