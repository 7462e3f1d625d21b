package runcmd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/caravan-dev/caravan/internal/cli/clitest"
)

// TestTheCorpusRunsAsKamelWouldRunIt: each kamel-style route file of testdata/corpus, modelines
// and all, goes through caravan run -o yaml; the Integration must be its golden file, which says
// what kamel gives it: dependencies, traits (kebab-case keys in camelCase) and properties.
func TestTheCorpusRunsAsKamelWouldRunIt(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*"))
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".golden.yaml") {
			continue
		}
		ran++
		t.Run(filepath.Base(f), func(t *testing.T) {
			out, errOut, err := clitest.ExecMutateCommand(t, NewCmdRun, append([]string{"run", f, "-n", "apps", "-o", "yaml"}, clitest.Unreachable...)...)
			if err != nil {
				t.Fatalf("%v: %s", err, errOut)
			}
			clitest.AssertGolden(t, filepath.Join("corpus", filepath.Base(f)+".golden.yaml"), out)
		})
	}
	if ran < 4 {
		t.Fatalf("the corpus holds %d files", ran)
	}
}
