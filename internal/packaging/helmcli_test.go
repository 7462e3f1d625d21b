package packaging

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caravan-dev/caravan/test/harness"
)

// helmCommand runs the real helm command on the chart of this tree, with no cluster.
func helmCommand(t *testing.T, args ...string) (string, error) {
	return harness.Helm(t, sourceRoot(), "", args...)
}

// TestTheHelmCommandLintsAndRefusesAMisspeltValue: helm lint --strict passes the chart, helm
// template renders it from a values file, and the same file with one key misspelt is refused,
// naming the key.
func TestTheHelmCommandLintsAndRefusesAMisspeltValue(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the helm command")
	}
	if out, err := helmCommand(t, "lint", "--strict", ChartDir); err != nil {
		t.Fatalf("helm lint --strict: %v\n%s", err, out)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "values.yaml")
	typo := filepath.Join(dir, "typo.yaml")
	if err := os.WriteFile(good, []byte("operatorId: tenant-a\nreplicas: 2\nwatchNamespaces: [team-a]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(typo, []byte("operatorId: tenant-a\nreplcas: 2\nwatchNamespaces: [team-a]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := helmCommand(t, "template", "tenant-a", ChartDir, "-n", "ops", "-f", good)
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	for _, want := range []string{"name: tenant-a-operator", "replicas: 2", "--watch-namespaces=team-a"} {
		if !strings.Contains(out, want) {
			t.Errorf("helm template does not render %q", want)
		}
	}
	out, err = helmCommand(t, "template", "tenant-a", ChartDir, "-n", "ops", "-f", typo)
	if err == nil || !strings.Contains(out, "replcas") {
		t.Fatalf("helm template with a misspelt key: %v\n%s\nwant a refusal naming replcas", err, out)
	}
}
