package procnode

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
)

func TestAMountPointLiesUnderTheLastEarlierMountHoldingIt(t *testing.T) {
	mounts := []mount{
		{Source: "/host/proc", Target: "/proc"},
		{Source: "/c/dev", Target: "/dev"},
		{Source: "/dev/null", Target: "/dev/null"},
		{Source: "/c/termination-log", Target: "/dev/termination-log"},
		{Source: "/v/config", Target: "/etc/camel"},
		{Source: "/v/conf.d", Target: "/etc/camel/conf.d/"},
		{Source: "/v/props", Target: "/etc/camel/conf.d/app.properties"},
		{Source: "/v/devices", Target: "/devices"},
		{Source: "/v/config2", Target: "/etc/camel"},
	}
	want := []string{
		"/r/proc",
		"/r/dev",
		"/c/dev/null",
		"/c/dev/termination-log",
		"/r/etc/camel",
		"/v/config/conf.d",
		"/v/conf.d/app.properties",
		"/r/devices",
		"/v/config",
	}
	for i, w := range want {
		if got := mountPoint("/r", mounts, i); got != w {
			t.Errorf("mount point of %s = %s, want %s", mounts[i].Target, got, w)
		}
	}
}

func TestEveryContainerGetsADevATmpAndATerminationLog(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "rootfs")
	g.Expect(os.MkdirAll(root, 0o755)).To(Succeed())
	c := &container{dir: dir}
	g.Expect(c.resetTerminationLog()).To(Succeed())
	mounts, err := runtimeMounts(dir, "/var/log/app/termination", false)
	g.Expect(err).NotTo(HaveOccurred())

	targets := map[string]string{}
	for _, m := range mounts {
		targets[m.Target] = m.Source
	}
	g.Expect(targets).To(HaveKeyWithValue("/dev", filepath.Join(dir, "dev")))
	g.Expect(targets).To(HaveKeyWithValue("/dev/null", "/dev/null"))
	g.Expect(targets).To(HaveKeyWithValue("/dev/urandom", "/dev/urandom"))
	g.Expect(targets).To(HaveKeyWithValue("/tmp", filepath.Join(dir, "tmp")))
	g.Expect(targets).To(HaveKeyWithValue("/var/log/app/termination", c.terminationLog()))
	for _, d := range []string{"tmp", "dev/shm"} {
		st, err := os.Stat(filepath.Join(dir, d))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(st.Mode()&(fs.ModePerm|fs.ModeSticky)).To(Equal(0o777|fs.ModeSticky), "%s is writable by any user, as 1777", d)
	}
	g.Expect(os.Readlink(filepath.Join(dir, "dev", "fd"))).To(Equal("/proc/self/fd"))

	g.Expect(makeMountPoints(root, mounts)).To(Succeed())
	null, err := os.Stat(filepath.Join(dir, "dev", "null"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(null.Mode().IsRegular()).To(BeTrue(), "a device's mount point is an empty file of the container's /dev")
	term, err := os.Stat(filepath.Join(root, "var", "log", "app", "termination"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(term.Mode().IsRegular()).To(BeTrue())
	g.Expect(filepath.Join(root, "tmp")).To(BeADirectory())

	_, err = runtimeMounts(dir, "relative/path", false)
	g.Expect(err).To(MatchError(ContainSubstring("not an absolute path")))
	again, err := runtimeMounts(dir, "", false)
	g.Expect(err).NotTo(HaveOccurred(), "preparing again after a failed pull works")
	g.Expect(again[len(again)-1].Target).To(Equal(defaultTerminationMessagePath))

	readOnly, err := runtimeMounts(t.TempDir(), "", true)
	g.Expect(err).NotTo(HaveOccurred())
	for _, m := range readOnly {
		g.Expect(m.Target).NotTo(Equal("/tmp"), "over a read-only root filesystem /tmp is the root's, read-only, as on a kubelet")
	}
}
