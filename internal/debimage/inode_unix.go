// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

//go:build unix

package debimage

import (
	"io/fs"
	"syscall"
)

// inode returns the device and inode of a file with more than one link, for finding hard links.
func inode(info fs.FileInfo) ([2]uint64, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink < 2 {
		return [2]uint64{}, false
	}
	return [2]uint64{uint64(st.Dev), uint64(st.Ino)}, true
}
