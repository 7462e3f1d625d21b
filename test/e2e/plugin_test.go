package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
)

// TestCaravanWorksAsAKubectlPlugin: named kubectl-caravan on the PATH, the
// binary runs as `kubectl caravan`, with kubectl's flags.
func TestCaravanWorksAsAKubectlPlugin(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	g.Expect(os.Symlink(caravanBin, filepath.Join(dir, "kubectl-caravan"))).To(Succeed())
	cmd := exec.Command(env.Binaries.Kubectl, "caravan", "version", "--kubeconfig", env.Kubeconfig(t, "admin", "system:masters"))
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	g.Expect(string(out)).To(ContainSubstring("Client:"))
	help, err := exec.Command(filepath.Join(dir, "kubectl-caravan"), "--help").CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(help)).To(ContainSubstring("kubectl caravan [command]"))
}
