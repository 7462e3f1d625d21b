//go:build !windows

package procnode

import "syscall"

// killGroup sends sig to the process group of pid.
func killGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }

// of reads the owner of the file at path, not following a symbolic link.
func (o *fileOwner) of(path string) error {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return err
	}
	o.uid, o.gid = int(st.Uid), int(st.Gid)
	return nil
}
