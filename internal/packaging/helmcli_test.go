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

// TestTheHelmCommandTakesATagQuietlyAndRefusesBadValues: helm template --set image.tag=X renders
// the operator at tag X and prints nothing but the manifests, and refuses, naming the value, an
// image that is no reference, a watched namespace that is no DNS-1123 label and a memory or CPU
// limit below its request.
func TestTheHelmCommandTakesATagQuietlyAndRefusesBadValues(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the helm command")
	}
	out, err := helmCommand(t, "template", "tenant-a", ChartDir, "-n", "ops", "--set", "image.tag=1.2.3",
		"--set", "imagePullSecrets[0].name=regcred")
	if err != nil {
		t.Fatalf("helm template --set image.tag=1.2.3: %v\n%s", err, out)
	}
	if !strings.HasPrefix(out, "---\n") || strings.Contains(strings.ToLower(out), "warning") {
		t.Errorf("helm template --set image.tag=1.2.3 printed more than the manifests:\n%.600s", out)
	}
	for _, want := range []string{"image: caravan/operator:1.2.3", `- name: "regcred"`} {
		if !strings.Contains(out, want) {
			t.Errorf("helm template does not render %q", want)
		}
	}
	for _, tc := range []struct{ set, want string }{
		{"image=not an image", "at '/image': 'not an image' does not match pattern"},
		{"watchNamespaces[0]=BAD_NS", "at '/watchNamespaces/0': 'BAD_NS' does not match pattern"},
		{"resources.limits.memory=32Mi", "resources.limits.memory (32Mi) is below resources.requests.memory (64Mi)"},
		{"resources.requests.cpu=2", "resources.limits.cpu (1) is below resources.requests.cpu (2)"},
	} {
		out, err := helmCommand(t, "template", "tenant-a", ChartDir, "-n", "ops", "--set", tc.set)
		if err == nil || !strings.Contains(out, tc.want) {
			t.Errorf("helm template --set %s: %v\n%s\nwant a refusal saying %q", tc.set, err, out, tc.want)
		}
	}
}
