//go:build !linux

package localcluster

import "syscall"

// DieWithParent does nothing off Linux, where Start refuses to run a cluster and the bench with it.
func DieWithParent(*syscall.SysProcAttr) {}
