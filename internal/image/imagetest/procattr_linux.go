// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package imagetest

import "syscall"

// sysProcAttr kills the registry when the test process dies without cleaning up.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
