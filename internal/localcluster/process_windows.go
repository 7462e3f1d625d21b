//go:build windows

package localcluster

import (
	"errors"
	"syscall"
)

// errNotHere says why the local cluster does not run on Windows.
var errNotHere = errors.New("the local cluster runs on Linux only")

// ownSession asks for nothing: the local cluster does not run here.
func ownSession() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// kill refuses: the local cluster does not run here.
func kill(int, syscall.Signal) error { return errNotHere }
