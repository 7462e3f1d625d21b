package main

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// cliOnly are the import paths, each with what lies below it, that the operator must not link:
// what only the CLI needs (its commands, kubectl's and cli-runtime's printing and resource
// builder, kustomize, Helm, the bench and its plots, and the local cluster), and the API server's
// library, which controller.MetricsAuth does without.
var cliOnly = []string{
	"github.com/caravan-dev/caravan/internal/cli",
	"github.com/caravan-dev/caravan/internal/bench",
	"github.com/caravan-dev/caravan/internal/localcluster",
	"k8s.io/kubectl",
	"k8s.io/cli-runtime",
	"sigs.k8s.io/kustomize",
	"helm.sh",
	"gonum.org",
	"k8s.io/apiserver",
}

// TestTheOperatorLinksNoCLI lists the packages the operator image's binary links, as the image
// builds it (linux, no cgo), and fails on any that only the CLI needs, naming how it is imported.
func TestTheOperatorLinksNoCLI(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command lists the dependencies: %v", err)
	}
	cmd := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", ".")
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, stderr.String())
	}
	imports := map[string][]string{}
	var root string
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		imports[fields[0]] = fields[1:]
		root = fields[0] // go list -deps prints the package itself last
	}
	found := cliImports(root, imports)
	for _, pkg := range slices.Sorted(maps.Keys(found)) {
		t.Errorf("the operator links %s, which only the CLI needs: %s", pkg, strings.Join(found[pkg], " -> "))
	}
}

// cliImports follows the imports from root and returns each package that only the CLI needs
// which it reaches without passing through another, with a shortest chain of imports to it.
func cliImports(root string, imports map[string][]string) map[string][]string {
	chains := map[string][]string{root: {root}}
	found := map[string][]string{}
	for queue := []string{root}; len(queue) > 0; queue = queue[1:] {
		from := queue[0]
		for _, pkg := range imports[from] {
			if _, seen := chains[pkg]; seen {
				continue
			}
			chains[pkg] = append(slices.Clip(chains[from]), pkg)
			if slices.ContainsFunc(cliOnly, func(prefix string) bool { return pkg == prefix || strings.HasPrefix(pkg, prefix+"/") }) {
				found[pkg] = chains[pkg]
				continue
			}
			queue = append(queue, pkg)
		}
	}
	return found
}
