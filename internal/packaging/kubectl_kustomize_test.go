package packaging

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/caravan-dev/caravan/internal/gobuild"
	"github.com/caravan-dev/caravan/internal/localcluster"
)

// kubectlKustomize are the kustomize releases that the kubectl releases Caravan supports embed, as
// their go.mod requires them. kubectl 1.30 embeds a commit between v5.0.3 and v5.0.4, which go
// install cannot build (its go.mod replaces modules): v5.0.3 stands for it.
var kubectlKustomize = []struct{ kubectl, kustomize string }{
	{"1.30", "v5.0.3"},
	{"1.31", "v5.4.2"},
	{"1.32", "v5.5.0"},
	{"1.33", "v5.6.0"},
	{"1.34 and 1.35", "v5.7.1"},
}

// TestEveryKustomizationBuildsAlikeWithTheKustomizeOfEachKubectl: each kustomization of the
// repository (the base, the overlays, the examples) builds with the kustomize of every kubectl
// Caravan supports the objects it builds with the kustomize library the other tests compare with
// caravan install. Older kustomize releases match a selector's name exactly, not as a regular
// expression, and leave alone what they do not select: the components must select otherwise.
func TestEveryKustomizationBuildsAlikeWithTheKustomizeOfEachKubectl(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a kustomize binary per kubectl release, once into the cache")
	}
	root := filepath.Join(sourceRoot(), KustomizeDir)
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "kustomization.yaml" {
			return err
		}
		data, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(data), "\nkind: Kustomization\n") {
			dirs = append(dirs, filepath.Dir(path))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 5 {
		t.Fatalf("found only the kustomizations %v under %s", dirs, root)
	}
	for _, k := range kubectlKustomize {
		bin := kustomizeBinary(t, k.kustomize)
		for _, dir := range dirs {
			rel, _ := filepath.Rel(root, dir)
			t.Run("kubectl "+k.kubectl+"/"+rel, func(t *testing.T) {
				var out, errOut bytes.Buffer
				cmd := exec.Command(bin, "build", dir)
				cmd.Stdout, cmd.Stderr = &out, &errOut
				if err := cmd.Run(); err != nil {
					t.Fatalf("kustomize %s build %s: %v\n%s", k.kustomize, rel, err, errOut.String())
				}
				expectSameObjects(t, normalized(t, buildIn(t, filesys.MakeFsOnDisk(), dir)), normalized(t, []string{out.String()}),
					"kustomize "+k.kustomize+" of kubectl "+k.kubectl)
			})
		}
	}
}

// kustomizeBinary is the kustomize command of release version, built once with go install into
// the cache directory.
func kustomizeBinary(t *testing.T, version string) string {
	t.Helper()
	cache, err := localcluster.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	// On stderr, as the test runs: the first build takes a minute or two.
	bin, err := gobuild.Install(cache, "sigs.k8s.io/kustomize/kustomize/v5", version, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
