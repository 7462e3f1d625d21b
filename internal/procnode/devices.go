package procnode

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// hostDevices are the device nodes of the machine that every container's
// /dev holds, bind-mounted: mknod is refused in a user namespace, a bind is not.
var hostDevices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// devLinks are the symbolic links of every container's /dev, to its
// process's file descriptors.
var devLinks = map[string]string{
	"fd":     "/proc/self/fd",
	"stdin":  "/proc/self/fd/0",
	"stdout": "/proc/self/fd/1",
	"stderr": "/proc/self/fd/2",
}

// defaultTerminationMessagePath is where a container writes its termination
// message when its spec names no path.
const defaultTerminationMessagePath = "/dev/termination-log"

// runtimeMounts makes the directories and files every container gets under
// dir, and returns their mounts. They are a /dev of its own with the
// machine's device nodes, a writable /tmp unless the root filesystem is
// read-only (where a kubelet's container can write /tmp only through a volume),
// and the termination message file at messagePath.
func runtimeMounts(dir, messagePath string, readOnlyRoot bool) ([]mount, error) {
	dev := filepath.Join(dir, "dev")
	if err := sharedDir(dev, 0o755); err != nil {
		return nil, err
	}
	if err := sharedDir(filepath.Join(dev, "shm"), 0o777|fs.ModeSticky); err != nil {
		return nil, err
	}
	for name, target := range devLinks {
		if err := os.Symlink(target, filepath.Join(dev, name)); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("creating /dev/%s: %w", name, err)
		}
	}
	mounts := []mount{{Source: dev, Target: "/dev"}}
	for _, name := range hostDevices {
		src := filepath.Join("/dev", name)
		if _, err := os.Stat(src); err != nil {
			continue // a machine without it gives containers none
		}
		mounts = append(mounts, mount{Source: src, Target: src})
	}
	if !readOnlyRoot {
		tmp := filepath.Join(dir, "tmp")
		if err := sharedDir(tmp, 0o777|fs.ModeSticky); err != nil {
			return nil, err
		}
		mounts = append(mounts, mount{Source: tmp, Target: "/tmp"})
	}
	if messagePath == "" {
		messagePath = defaultTerminationMessagePath
	}
	if !filepath.IsAbs(messagePath) {
		return nil, fmt.Errorf("terminationMessagePath %q is not an absolute path", messagePath)
	}
	return append(mounts, mount{Source: filepath.Join(dir, terminationLogName), Target: messagePath}), nil
}

// sharedDir creates dir with exactly mode, whatever the umask.
func sharedDir(dir string, mode fs.FileMode) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		return fmt.Errorf("setting the mode of %s: %w", dir, err)
	}
	return nil
}

// mountPoint is the host path on which the init mounts mounts[i]: under
// the source of the last earlier mount that holds its target, else under root.
func mountPoint(root string, mounts []mount, i int) string {
	target := filepath.Clean("/" + mounts[i].Target)
	for j := i - 1; j >= 0; j-- {
		parent := filepath.Clean("/" + mounts[j].Target)
		if target == parent {
			return mounts[j].Source
		}
		if rel, ok := strings.CutPrefix(target, strings.TrimSuffix(parent, "/")+"/"); ok {
			return filepath.Join(mounts[j].Source, rel)
		}
	}
	return filepath.Join(root, target)
}

// makeMountPoints creates the mount point of each mount, a directory or an
// empty file as its source is one, unless it exists.
func makeMountPoints(root string, mounts []mount) error {
	for i, m := range mounts {
		p := mountPoint(root, mounts, i)
		st, err := os.Stat(m.Source)
		if err != nil {
			return fmt.Errorf("mount of %s: %w", m.Target, err)
		}
		if st.IsDir() {
			err = os.MkdirAll(p, 0o755)
		} else {
			err = mountFile(p)
		}
		if err != nil {
			return fmt.Errorf("creating the mount point %s: %w", m.Target, err)
		}
	}
	return nil
}

// mountFile creates an empty file at p, and its directory, unless p exists.
func mountFile(p string) error {
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}
