package procnode

import (
	"fmt"
	"path/filepath"
	"syscall"
)

// confine mounts the volumes, makes the root read-only when asked, enters
// it and drops to the container's user.
func confine(s containerSpec) error {
	if err := syscall.Sethostname([]byte(s.Hostname)); err != nil {
		return fmt.Errorf("setting the host name: %w", err)
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mounts private: %w", err)
	}
	if err := syscall.Mount(s.Root, s.Root, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return fmt.Errorf("binding the root filesystem: %w", err)
	}
	if s.ReadOnlyRoot {
		if err := syscall.Mount("", s.Root, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("making the root filesystem read-only: %w", err)
		}
	}
	for _, m := range s.Mounts {
		target := filepath.Join(s.Root, m.Target)
		if err := syscall.Mount(m.Source, target, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
			return fmt.Errorf("mounting %s: %w", m.Target, err)
		}
		if m.ReadOnly {
			if err := syscall.Mount("", target, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
				return fmt.Errorf("making %s read-only: %w", m.Target, err)
			}
		}
	}
	if err := syscall.Chroot(s.Root); err != nil {
		return fmt.Errorf("entering the root filesystem: %w", err)
	}
	if err := syscall.Chdir(orRoot(s.Dir)); err != nil {
		return fmt.Errorf("entering the working directory %s: %w", s.Dir, err)
	}
	if s.UserNamespace {
		return nil
	}
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("dropping the supplementary groups: %w", err)
	}
	if err := syscall.Setgid(s.GID); err != nil {
		return fmt.Errorf("becoming group %d: %w", s.GID, err)
	}
	if err := syscall.Setuid(s.UID); err != nil {
		return fmt.Errorf("becoming user %d: %w", s.UID, err)
	}
	// A change of user clears the parent-death signal: set it again, so that
	// the container dies with its node.
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
	return nil
}
