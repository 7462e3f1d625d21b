// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

//go:build !unix

package debimage

import "io/fs"

// inode reports no hard links where the system does not expose inodes.
func inode(fs.FileInfo) ([2]uint64, bool) { return [2]uint64{}, false }
