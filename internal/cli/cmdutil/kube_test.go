package cmdutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caravan-dev/caravan/internal/command"
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

func TestAKubeconfigOrContextThatDoesNotExistIsNamed(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	config := filepath.Join(dir, "config")
	if err := os.WriteFile(config, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:1\"}\n"+
		"contexts:\n- name: b\n  context: {cluster: c}\n- name: a\n  context: {cluster: c}\ncurrent-context: gone\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", config)
	for _, tc := range []struct {
		kubeconfig, context, want string
	}{
		{filepath.Join(dir, "nope"), "", "--kubeconfig " + filepath.Join(dir, "nope") + ": the file does not exist"},
		{"", "nosuch", "--context nosuch: no such context in the kubeconfig (" + config + "): its contexts are a, b; give one of them to --context"},
		{"", "", "the kubeconfig's current context gone is not one of its contexts (" + config + "): its contexts are a, b; " +
			"give one of them to --context, or make one current with kubectl config use-context NAME"},
	} {
		f := NewKubeFlags()
		*f.KubeConfig, *f.Context = tc.kubeconfig, tc.context
		_, nsErr := f.Namespace()
		_, configErr := f.RESTConfig()
		for _, err := range []error{nsErr, configErr} {
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || command.ExitCode(err) != command.ExitUsage {
				t.Errorf("--kubeconfig %q --context %q: got %v (exit code %d), want %q", tc.kubeconfig, tc.context, err, command.ExitCode(err), tc.want)
			}
		}
	}
	f := NewKubeFlags()
	*f.Context = "a"
	if _, err := f.Namespace(); err != nil {
		t.Errorf("--context a: %v", err)
	}
}
