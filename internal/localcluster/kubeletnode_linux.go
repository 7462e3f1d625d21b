package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// createBridge creates the node's bridge unless it exists, gives it address/24 and brings it up.
func createBridge(name, address string) error {
	link, err := netlink.LinkByName(name)
	var notFound netlink.LinkNotFoundError
	if errors.As(err, &notFound) {
		if err := netlink.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: name}}); err != nil {
			return fmt.Errorf("creating the bridge %s: %w", name, err)
		}
		link, err = netlink.LinkByName(name)
	}
	if err != nil {
		return fmt.Errorf("finding the bridge %s: %w", name, err)
	}
	addr, err := netlink.ParseAddr(address + "/24")
	if err != nil {
		return err
	}
	if err := netlink.AddrReplace(link, addr); err != nil {
		return fmt.Errorf("giving the bridge %s the address %s: %w", name, address, err)
	}
	if err := netlink.LinkSetUp(link); err != nil {
		return fmt.Errorf("bringing the bridge %s up: %w", name, err)
	}
	return nil
}

// cleanKubeletNode removes what the kubelet node leaves once its processes stopped: its
// containers and their shims, the pods' network attachments, kube-proxy's rules, the mounts
// under the cluster's directory, the pods' cgroups and the bridge.
func (c *Cluster) cleanKubeletNode() error {
	var errs []error
	groups := podCgroups()
	for _, g := range groups {
		killCgroup(g)
	}
	if shim := c.shimBinary(); shim != "" {
		killProgram(shim)
	}
	if err := c.releasePodNetworks(); err != nil {
		errs = append(errs, err)
	}
	if p, err := c.component("kube-proxy"); err == nil {
		cmd := exec.Command(p.Binary, "--cleanup")
		cmd.Env = append(os.Environ(), p.Env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("removing kube-proxy's rules: %w: %s", err, lastLine(string(out))))
		}
	}
	if err := unmountUnder(c.Dir); err != nil {
		errs = append(errs, err)
	}
	for _, g := range groups {
		removeCgroup(g)
	}
	if link, err := netlink.LinkByName(NodeBridge); err == nil {
		if err := netlink.LinkDel(link); err != nil {
			errs = append(errs, fmt.Errorf("removing the bridge %s: %w", NodeBridge, err))
		}
	}
	return errors.Join(errs...)
}

// releasePodNetworks runs the CNI DEL of each pod attachment libcni recorded for the pods'
// network, as containerd does when it stops a pod, so that the plugins remove the address,
// masquerade and hostPort rules of pods killed without it; then it removes the records.
func (c *Cluster) releasePodNetworks() error {
	p, err := c.component("containerd")
	if err != nil {
		return nil // containerd never ran: no pod was attached
	}
	cni := libcni.NewCNIConfig([]string{filepath.Dir(p.Binary)}, pluginExec{DefaultExec: &invoke.DefaultExec{RawExec: &invoke.RawExec{Stderr: io.Discard}}, env: p.Env})
	attachments, err := cni.GetCachedAttachments("")
	if err != nil {
		return fmt.Errorf("reading the pods' network attachments: %w", err)
	}
	var errs []error
	for _, a := range attachments {
		if a.Network != networkName {
			continue
		}
		// libcni records the whole list of the network an attachment was added with.
		conf, err := libcni.ConfListFromBytes(a.Config)
		if err == nil {
			err = cni.DelNetworkList(context.Background(), conf, &libcni.RuntimeConf{ContainerID: a.ContainerID,
				NetNS: a.NetNS, IfName: a.IfName, Args: a.CniArgs, CapabilityArgs: a.CapabilityArgs})
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("releasing the network of pod sandbox %s: %w", a.ContainerID, err))
		}
	}
	results, _ := filepath.Glob(filepath.Join("/var/lib/cni/results", networkName+"-*"))
	for _, r := range results {
		_ = os.Remove(r)
	}
	return errors.Join(errs...)
}

// pluginExec runs CNI plugins with env added to their environment: nft's path and libraries.
type pluginExec struct {
	*invoke.DefaultExec
	env []string
}

// ExecPlugin runs the plugin at path with env after environ.
func (e pluginExec) ExecPlugin(ctx context.Context, path string, stdin []byte, environ []string) ([]byte, error) {
	return e.DefaultExec.ExecPlugin(ctx, path, stdin, append(environ, e.env...))
}

// shimBinary is the containerd shim the cluster's containerd ran, "" if it never ran.
func (c *Cluster) shimBinary() string {
	p, err := c.component("containerd")
	if err != nil {
		return ""
	}
	return filepath.Join(filepath.Dir(p.Binary), "containerd-shim-runc-v2")
}

// podCgroups are the kubelet's cgroup trees (kubepods) in each of the machine's hierarchies.
func podCgroups() []string {
	groups, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods")
	if _, err := os.Stat("/sys/fs/cgroup/kubepods"); err == nil {
		groups = append(groups, "/sys/fs/cgroup/kubepods")
	}
	return groups
}

// killCgroup kills every process in the cgroup tree at dir.
func killCgroup(dir string) {
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
			return nil
		}
		data, _ := os.ReadFile(path)
		for _, field := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(field); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		return nil
	})
}

// removeCgroup removes the cgroup tree at dir, deepest first; a cgroup still in use stays.
func removeCgroup(dir string) {
	var dirs []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	slices.Reverse(dirs)
	for _, d := range dirs {
		_ = unix.Rmdir(d)
	}
}

// killProgram kills every process that runs the program at path.
func killProgram(path string) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, ok := procExe(pid); ok && exe == path {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// unmountUnder detaches every mount at or below dir, deepest first: the kubelet's volumes, the
// containers' root filesystems and the pods' network namespaces.
func unmountUnder(dir string) error {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	var points []string
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 5 {
			continue
		}
		point := unescapeMountPoint(fields[4])
		if point == dir || strings.HasPrefix(point, dir+"/") {
			points = append(points, point)
		}
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	var errs []error
	for _, p := range points {
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// unescapeMountPoint decodes mountinfo's octal escapes (\040 for a space).
func unescapeMountPoint(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
