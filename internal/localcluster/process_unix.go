//go:build !windows

package localcluster

import "syscall"

// ownSession starts a process in a session of its own, which a terminal's signals do not reach.
func ownSession() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// kill sends sig to the process pid.
func kill(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }
