// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

//go:build !linux

package imagetest

import "syscall"

// sysProcAttr has nothing to add outside Linux.
func sysProcAttr() *syscall.SysProcAttr { return nil }
