package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/caravan-dev/caravan/internal/localcluster"
)

// nonRootUser is the unprivileged account the test creates to run a local cluster.
const nonRootUser = "caravan-nonroot"

// TestALocalClusterOfAnUnprivilegedUserRunsOperatorPods: most users are not
// root. A local cluster started by an unprivileged user runs its process
// node as that user, and an operator pod on it, confined in a user
// namespace, becomes ready.
func TestALocalClusterOfAnUnprivilegedUserRunsOperatorPods(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("this suite runs as an unprivileged user already: every local cluster of it is one")
	}
	g := NewWithT(t)
	uid, gid := unprivilegedUser(t)

	// Everything the user reads lies under a directory of its own: the
	// cache and this test's binary live under directories only root enters.
	base, err := os.MkdirTemp("", "caravan-nonroot-")
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	g.Expect(os.Chmod(base, 0o755)).To(Succeed())
	home, cache, dir := filepath.Join(base, "home"), filepath.Join(base, "cache"), filepath.Join(base, "home", "local")
	g.Expect(os.MkdirAll(home, 0o755)).To(Succeed())
	cacheDir, err := localcluster.DefaultCacheDir()
	g.Expect(err).NotTo(HaveOccurred())
	for _, sub := range []string{"bin", "debimage"} {
		g.Expect(linkTree(filepath.Join(cacheDir, sub), filepath.Join(cache, sub), uid, gid)).To(Succeed())
	}
	g.Expect(os.Chown(cache, uid, gid)).To(Succeed())
	bin := filepath.Join(base, "caravan")
	g.Expect(linkOrCopy(env.Caravan, bin)).To(Succeed())
	g.Expect(os.Chown(home, uid, gid)).To(Succeed())

	asUser := func(args ...string) (string, string, error) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, args...)
		// No Go and no PATH of root's: what a user who only downloaded
		// caravan and its cache has.
		cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin", "CARAVAN_CACHE_DIR=" + cache}
		cmd.Dir = home
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	t.Cleanup(func() { _, _, _ = asUser("local", "down", "--dir", dir) })
	out, errOut, err := asUser("local", "up", "--dir", dir)
	g.Expect(err).NotTo(HaveOccurred(), "local up as %s: %s\n%s", nonRootUser, out, errOut)
	g.Expect(errOut).To(ContainSubstring("the real pods run on the process node: the kubelet node needs root"),
		"local up says which node it chose, and why")

	t.Log("every process of the cluster runs as the user")
	processes := recordedProcesses(t, dir)
	g.Expect(processes).NotTo(BeEmpty())
	for _, p := range processes {
		g.Expect(processUID(p.PID)).To(Equal(uid), "%s (pid %d)", p.Name, p.PID)
	}

	t.Log("an operator installed on it runs as a pod of the process node, and becomes ready")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	install := exec.Command(env.Caravan, "--kubeconfig", kubeconfig, "install", "-n", "caravan", "-x", "unprivileged",
		"--image", env.OperatorImage(t), "--skip-admission", "--wait")
	install.Env = append(os.Environ(), "CARAVAN_LOCAL_DIR="+dir)
	output, err := install.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "install: %s\n%s", output, logTail(filepath.Join(dir, "logs", "process-node.log")))
	readyPods := func() ([]string, error) {
		kubectl := exec.Command(env.Caravan, "local", "kubectl", "--dir", dir, "--", "get", "pods", "-n", "caravan", "-o", "json")
		kubectl.Env = append(os.Environ(), "CARAVAN_CACHE_DIR="+cache)
		out, err := kubectl.Output()
		if err != nil {
			return nil, err
		}
		pods := &corev1.PodList{}
		if err := json.Unmarshal(out, pods); err != nil {
			return nil, err
		}
		var ready []string
		for _, p := range pods.Items {
			if p.Spec.NodeName == localcluster.ProcessNodeName && podReady(&p) {
				ready = append(ready, p.Name)
			}
		}
		return ready, nil
	}
	g.Eventually(readyPods, timeout).Should(HaveLen(1), "ready operator pods on the process node; end of its log:\n%s",
		logTail(filepath.Join(dir, "logs", "process-node.log")))

	t.Log("the operator's process runs as the user too, not as root")
	operator := processesWithEnv("OPERATOR_ID=unprivileged")
	g.Expect(operator).NotTo(BeEmpty(), "no process runs the operator")
	for _, pid := range operator {
		g.Expect(processUID(pid)).To(Equal(uid), "operator process %d", pid)
	}
}

// unprivilegedUser returns the uid and gid of nonRootUser, creating it when
// the machine lacks it.
func unprivilegedUser(t *testing.T) (int, int) {
	t.Helper()
	u, err := user.Lookup(nonRootUser)
	if errors.As(err, new(user.UnknownUserError)) {
		out, addErr := exec.Command("useradd", "--system", "--user-group", "--no-create-home",
			"--shell", "/usr/sbin/nologin", nonRootUser).CombinedOutput()
		if addErr != nil {
			t.Fatalf("creating the user %s: %v: %s", nonRootUser, addErr, out)
		}
		u, err = user.Lookup(nonRootUser)
	}
	if err != nil {
		t.Fatalf("looking up %s: %v", nonRootUser, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return uid, gid
}

// processUID is the real user id of pid, or -1 when it cannot be read.
func processUID(pid int) int {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if fields := strings.Fields(line); len(fields) > 1 && fields[0] == "Uid:" {
			uid, _ := strconv.Atoi(fields[1])
			return uid
		}
	}
	return -1
}

// linkTree recreates the regular files under src in dst, as hard links
// where the file system allows and as copies where not, in directories
// that uid owns; it leaves out lock files and unfinished builds.
func linkTree(src, dst string, uid, gid int) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if strings.HasSuffix(d.Name(), ".partial") {
				return filepath.SkipDir
			}
			if err := os.MkdirAll(filepath.Join(dst, rel), 0o755); err != nil {
				return err
			}
			return os.Chown(filepath.Join(dst, rel), uid, gid)
		}
		if strings.HasSuffix(d.Name(), ".lock") || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm()&0o004 != 0 {
			return linkOrCopy(path, filepath.Join(dst, rel))
		}
		// A file only its owner reads is copied, for uid to own.
		if err := copyFile(path, filepath.Join(dst, rel)); err != nil {
			return err
		}
		return os.Chown(filepath.Join(dst, rel), uid, gid)
	})
}

func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	return copyFile(src, dst)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// logTail is the end of a log file, for a failure's message.
func logTail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-30):], "\n")
}

// processesWithEnv lists the PIDs whose environment holds the entry K=V.
func processesWithEnv(entry string) []int {
	return processesWhere("environ", func(environ []byte) bool {
		return bytes.Contains(append([]byte{0}, environ...), []byte("\x00"+entry+"\x00"))
	})
}
