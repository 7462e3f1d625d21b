//go:build windows

package procnode

import "syscall"

// killGroup refuses: the process node runs on Linux only.
func killGroup(int, syscall.Signal) error { return errNotLinux }

// of refuses: the process node runs on Linux only.
func (o *fileOwner) of(string) error { return errNotLinux }
