package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
)

// TestCaravanWorksAsAKubectlPlugin: named kubectl-caravan on the PATH, the
// binary runs as `kubectl caravan`, with kubectl's flags; named
// kubectl_complete-caravan, it completes `kubectl caravan` for kubectl.
func TestCaravanWorksAsAKubectlPlugin(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	g.Expect(os.Symlink(env.Caravan, filepath.Join(dir, "kubectl-caravan"))).To(Succeed())
	cmd := exec.Command(env.Binaries.Kubectl, "caravan", "version", "--kubeconfig", env.Kubeconfig(t, "admin", "system:masters"))
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	g.Expect(string(out)).To(ContainSubstring("Client:"))
	help, err := exec.Command(filepath.Join(dir, "kubectl-caravan"), "--help").CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(help)).To(ContainSubstring("kubectl caravan [command]"))

	g.Expect(os.Symlink(env.Caravan, filepath.Join(dir, "kubectl_complete-caravan"))).To(Succeed())
	complete := exec.Command(env.Binaries.Kubectl, "__complete", "caravan", "vers")
	complete.Env = cmd.Env
	out, err = complete.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	g.Expect(string(out)).To(ContainSubstring("version"))
}
