package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Helm runs the helm command of go.mod's tool directive in the source tree dir, against the
// cluster of kubeconfig (none when empty), with its homes in a temporary directory. It returns
// what the command printed and its error.
func Helm(t testing.TB, dir, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command("go", append([]string{"tool", "helm"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	if kubeconfig != "" {
		cmd.Env = append(cmd.Env, "KUBECONFIG="+kubeconfig)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}
