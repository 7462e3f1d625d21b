package cmdutil

import (
	"path/filepath"
	"testing"
)

func TestWithoutAKubeconfigTheErrorSaysWhereOneComesFrom(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("KUBECONFIG", filepath.Join(dir, "missing"))
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, err := NewKubeFlags().RESTConfig(); err != errNoKubeconfig {
		t.Fatalf("got %v, want %v", err, errNoKubeconfig)
	}
	f := NewKubeFlags()
	*f.APIServer = "https://127.0.0.1:6443"
	if cfg, err := f.RESTConfig(); err != nil || cfg.Host != "https://127.0.0.1:6443" {
		t.Fatalf("with --server: got %v, %v", cfg, err)
	}
}
