//go:build linux

package procnode

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	. "github.com/onsi/gomega"
)

// initTestEnv makes the test binary run Init on the spec its argument names.
const initTestEnv = "CARAVAN_PROCNODE_TEST_INIT"

func TestMain(m *testing.M) {
	if os.Getenv(initTestEnv) != "" {
		if err := Init(os.Args[1]); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(125)
	}
	os.Exit(m.Run())
}

// confinedCheck needs what a JVM needs of the container's files: device
// nodes, a writable /tmp and /dev/shm, the termination log, a read-only root.
const confinedCheck = `test -c /dev/null && test -c /dev/urandom && head -c 16 /dev/urandom >/dev/null && ` +
	`echo discarded >/dev/null && test "$(stat -c %a /tmp)" = 1777 && touch /tmp/ok /dev/shm/ok && ` +
	`test -L /dev/fd && echo done >/dev/termination-log && ! touch /written 2>/dev/null`

func TestAConfinedProcessGetsDevicesATmpAndATerminationLog(t *testing.T) {
	if st, err := os.Lstat("/bin"); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Skip("the test's root filesystem borrows the machine's /usr, which needs /bin to be a link into it")
	}
	for _, tc := range []struct {
		name          string
		userNamespace bool
	}{
		{"as root, switching to an unprivileged user", false},
		{"in a user namespace, as an unprivileged node does", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.userNamespace && os.Getuid() != 0 {
				t.Skip("needs root")
			}
			g := NewWithT(t)
			c := &container{dir: t.TempDir()}
			root := filepath.Join(c.dir, "rootfs")
			g.Expect(os.MkdirAll(root, 0o755)).To(Succeed())
			g.Expect(os.Chmod(c.dir, 0o755)).To(Succeed())
			for _, l := range []string{"bin", "lib", "lib64", "sbin"} {
				g.Expect(os.Symlink("usr/"+l, filepath.Join(root, l))).To(Succeed())
			}
			g.Expect(c.resetTerminationLog()).To(Succeed())
			runtime, err := runtimeMounts(c.dir, "", false)
			g.Expect(err).NotTo(HaveOccurred())
			mounts := append([]mount{{Source: "/proc", Target: "/proc", ReadOnly: true}, {Source: "/usr", Target: "/usr"}}, runtime...)
			g.Expect(makeMountPoints(root, mounts)).To(Succeed())
			spec := containerSpec{Root: root, ReadOnlyRoot: true, Mounts: mounts, UID: 65534, GID: 65534, Hostname: "confined",
				Args: []string{"/bin/sh", "-c", confinedCheck}, Env: []string{"PATH=/usr/bin:/bin"}, UserNamespace: tc.userNamespace}
			data, err := json.Marshal(spec)
			g.Expect(err).NotTo(HaveOccurred())
			specPath := filepath.Join(c.dir, "spec.json")
			g.Expect(os.WriteFile(specPath, data, 0o600)).To(Succeed())

			self, err := os.Executable()
			g.Expect(err).NotTo(HaveOccurred())
			cmd := exec.Command(self, specPath)
			cmd.Env = append(os.Environ(), initTestEnv+"=1")
			cmd.SysProcAttr = confinement()
			if tc.userNamespace && os.Getuid() == 0 {
				cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
				cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}}
				cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}}
			}
			out, err := cmd.CombinedOutput()
			g.Expect(err).NotTo(HaveOccurred(), "the check failed: %s", out)
			g.Expect(readHead(c.terminationLog(), maxMessageBytes)).To(Equal([]byte("done\n")))
			g.Expect(filepath.Join(c.dir, "tmp", "ok")).To(BeARegularFile())
			g.Expect(filepath.Join(c.dir, "dev", "shm", "ok")).To(BeARegularFile())
		})
	}
}
