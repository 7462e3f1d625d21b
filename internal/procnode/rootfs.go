package procnode

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// copyTree copies the image's root filesystem src to dst. With link,
// regular files are hard links to the image's (the container cannot
// write them: its root is read-only); otherwise they are copies.
func copyTree(src, dst string, link bool) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		info, err := os.Lstat(path)
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := os.MkdirAll(target, info.Mode().Perm()); err != nil {
				return err
			}
			if err := os.Chmod(target, info.Mode()&(fs.ModePerm|fs.ModeSticky)); err != nil {
				return err
			}
		case info.Mode()&fs.ModeSymlink != 0:
			dest, err := os.Readlink(path)
			if err != nil {
				return err
			}
			if err := os.Symlink(dest, target); err != nil {
				return err
			}
		case link:
			if err := os.Link(path, target); err != nil {
				return err
			}
			return nil
		default:
			if err := copyFile(path, target, info.Mode().Perm()); err != nil {
				return err
			}
			if err := os.Chtimes(target, info.ModTime(), info.ModTime()); err != nil {
				return err
			}
		}
		return keepOwner(path, target)
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeFile(dst, in, mode)
}

// keepOwner gives dst the owner of src, when the node runs as root.
func keepOwner(src, dst string) error {
	if os.Getuid() != 0 {
		return nil
	}
	var st fileOwner
	if err := st.of(src); err != nil {
		return err
	}
	return os.Lchown(dst, st.uid, st.gid)
}

// writeNetworkFiles gives the container its /etc/hosts, /etc/hostname and
// the node's /etc/resolv.conf, as a kubelet does.
func writeNetworkFiles(root, hostname, ip string) error {
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		return err
	}
	hosts := fmt.Sprintf("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n%s\t%s\n", ip, hostname)
	files := map[string][]byte{"etc/hosts": []byte(hosts), "etc/hostname": []byte(hostname + "\n")}
	if resolv, err := os.ReadFile("/etc/resolv.conf"); err == nil {
		files["etc/resolv.conf"] = resolv
	}
	for rel, data := range files {
		p := filepath.Join(root, rel)
		_ = os.Remove(p) // may be a hard link to the image's file
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// containerUser returns the uid and gid the container runs as: its
// security context's, else the pod's, else the image's user (numeric or
// looked up in the image's /etc/passwd), else root. runAsNonRoot refuses
// a root user.
func containerUser(pod *corev1.Pod, c *corev1.Container, imageUser, root string) (int, int, error) {
	uid, gid, err := imageIDs(imageUser, root)
	if err != nil {
		return 0, 0, err
	}
	nonRoot := false
	if psc := pod.Spec.SecurityContext; psc != nil {
		uid, gid = pick(psc.RunAsUser, uid), pick(psc.RunAsGroup, gid)
		nonRoot = psc.RunAsNonRoot != nil && *psc.RunAsNonRoot
	}
	if sc := c.SecurityContext; sc != nil {
		uid, gid = pick(sc.RunAsUser, uid), pick(sc.RunAsGroup, gid)
		if sc.RunAsNonRoot != nil {
			nonRoot = *sc.RunAsNonRoot
		}
	}
	if nonRoot && uid == 0 {
		return 0, 0, fmt.Errorf("container has runAsNonRoot and its image will run as root")
	}
	return uid, gid, nil
}

func pick(v *int64, def int) int {
	if v != nil {
		return int(*v)
	}
	return def
}

// imageIDs resolves an image config's User (user[:group]) in root.
func imageIDs(user, root string) (int, int, error) {
	if user == "" {
		return 0, 0, nil
	}
	u, g, hasGroup := strings.Cut(user, ":")
	uid, err := strconv.Atoi(u)
	gid := uid
	if err != nil {
		uid, gid, err = lookupUser(root, u)
		if err != nil {
			return 0, 0, err
		}
	}
	if hasGroup {
		if gid, err = strconv.Atoi(g); err != nil {
			return 0, 0, fmt.Errorf("image user %q: group %q is not numeric", user, g)
		}
	}
	return uid, gid, nil
}

func lookupUser(root, name string) (int, int, error) {
	f, err := os.Open(filepath.Join(root, "etc", "passwd"))
	if err != nil {
		return 0, 0, fmt.Errorf("image user %q: no /etc/passwd in the image", name)
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) >= 4 && fields[0] == name {
			uid, err1 := strconv.Atoi(fields[2])
			gid, err2 := strconv.Atoi(fields[3])
			if err1 == nil && err2 == nil {
				return uid, gid, nil
			}
		}
	}
	return 0, 0, fmt.Errorf("image user %q is not in the image's /etc/passwd", name)
}

// commandLine is what the container runs: the pod's command or the image's
// entrypoint, then the pod's args or (without a pod command) the image's
// cmd, with $(VAR) expanded from env.
func commandLine(c *corev1.Container, entrypoint, cmd, env []string) []string {
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	expanded := func(in []string) []string {
		out := make([]string, len(in))
		for i, s := range in {
			out[i] = expand(s, vars)
		}
		return out
	}
	switch {
	case len(c.Command) > 0:
		return append(expanded(c.Command), expanded(c.Args)...)
	case len(c.Args) > 0:
		return append(append([]string(nil), entrypoint...), expanded(c.Args)...)
	default:
		return append(append([]string(nil), entrypoint...), cmd...)
	}
}

// fileOwner is the owner of a file.
type fileOwner struct{ uid, gid int }
