package publish

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/image/imagetest"
	"github.com/caravan-dev/caravan/internal/maven"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// mavenList writes the jars (coordinate to content) into repo and lists
// them in a file as Maven's dependency plugin does, as a builder pod's
// Maven container leaves it for Run.
func mavenList(t *testing.T, repo string, jars map[string]string) string {
	t.Helper()
	var list strings.Builder
	list.WriteString("The following files have been resolved:\n")
	for coord, content := range jars {
		file := filepath.Join(repo, strings.ReplaceAll(coord, ":", "_")+".jar")
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&list, "   %s:compile:%s\n", coord, file)
	}
	listFile := filepath.Join(t.TempDir(), "dependencies.txt")
	if err := os.WriteFile(listFile, []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return listFile
}

// kitFiles pulls kit image ref from reg and returns it with its files, by path.
func kitFiles(t *testing.T, reg image.Registry, ref string) (v1.Image, map[string][]byte) {
	t.Helper()
	img, err := image.Pull(context.Background(), reg, ref)
	if err != nil {
		t.Fatal(err)
	}
	files, err := image.ListFiles(img)
	if err != nil {
		t.Fatal(err)
	}
	return img, files
}

// pushBase pushes a random image of layers to reg as base:1, the base the tests' kits name.
func pushBase(t *testing.T, reg image.Registry, layers int64) {
	t.Helper()
	base, err := random.Image(512, layers)
	if err != nil {
		t.Fatal(err)
	}
	if err := image.Push(context.Background(), reg, reg.Address+"/base:1", base); err != nil {
		t.Fatal(err)
	}
}

func TestAKitHoldsItsJarsAndAKitOnAParentAddsOnlyWhatItLacks(t *testing.T) {
	ctx := context.Background()
	reg := imagetest.StartRegistry(t).Config()
	pushBase(t, reg, 2)
	repo := t.TempDir()
	req := Request{Project: maven.NewProject(runtime.Main, "4.18.0", nil, nil),
		BaseImage: "base:1", RegistryAddress: reg.Address, Insecure: true, Repository: "kit-a", Labels: map[string]string{"kit": "a"}}
	trained := t.TempDir()
	for name, content := range map[string]string{ArgsFile: "-cp\n", ArchiveFile: "an archive", ClasspathFile: "a classpath jar",
		LogFile: "[4.144s][info][cds,dynamic] 3027 klasses; 50281 symbols\n"} {
		if err := os.WriteFile(filepath.Join(trained, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	first, err := Run(ctx, req, mavenList(t, repo, map[string]string{
		"org.example:core:jar:1.0": "core 1.0", "org.example:lib:jar:1.0": "lib 1.0"}), trained)
	if err != nil {
		t.Fatal(err)
	}
	img, files := kitFiles(t, reg, first.Image)
	if got := string(files[runtime.DependenciesDir+"/org.example.core-1.0.jar"]); got != "core 1.0" {
		t.Errorf("the kit's core jar holds %q", got)
	}
	if string(files[runtime.ArchivePath]) != "an archive" || string(files[runtime.ClasspathJar]) != "a classpath jar" {
		t.Errorf("the kit's layer lacks the training's archive or classpath jar: %v", slices.Collect(maps.Keys(files)))
	}
	if first.Archive != (Archive{Classes: 3027, Size: int64(len("an archive"))}) {
		t.Errorf("the result says %+v of the archive", first.Archive)
	}
	if first.Added != 2 || len(first.Artifacts) != 2 || !strings.HasPrefix(first.Artifacts[0].Checksum, "sha256:") {
		t.Errorf("the result counts %d added of %+v", first.Added, first.Artifacts)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	listed, err := ImageArtifacts(img)
	if err != nil || len(listed) != 2 || listed[0].Checksum != first.Artifacts[0].Checksum {
		t.Errorf("the image lists %v (%v)", cfg.Config.Labels[ArtifactsLabel], err)
	}
	if cfg.Config.Labels["kit"] != "a" {
		t.Errorf("the request's label is missing: %v", cfg.Config.Labels)
	}

	t.Log("a kit that adds a jar and moves lib to 1.1 builds on the first")
	req.Repository, req.Parent = "kit-b", &build.Parent{Image: first.Image, Artifacts: StatusArtifacts(first.Artifacts)}
	second, err := Run(ctx, req, mavenList(t, repo, map[string]string{"org.example:core:jar:1.0": "core 1.0",
		"org.example:lib:jar:1.1": "lib 1.1", "org.example:extra:jar:2.0": "extra 2.0"}), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	img2, err := image.Pull(ctx, reg, second.Image)
	if err != nil {
		t.Fatal(err)
	}
	parentLayers, _ := img.Layers()
	layers, _ := img2.Layers()
	if len(layers) != len(parentLayers)+1 {
		t.Fatalf("the kit has %d layers on its parent's %d", len(layers), len(parentLayers))
	}
	for i := range parentLayers {
		want, _ := parentLayers[i].Digest()
		got, _ := layers[i].Digest()
		if want != got {
			t.Errorf("layer %d is %s, not the parent's %s", i, got, want)
		}
	}
	top, err := image.ListFiles(img2)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range top {
		names = append(names, n)
	}
	// Without a training of its own, the parent's archive leaves the kit.
	want := []string{runtime.DeploymentsDir + "/.wh.kit-classpath.jar", runtime.DeploymentsDir + "/.wh.kit.jsa",
		runtime.DependenciesDir + "/.wh.org.example.lib-1.0.jar", runtime.DependenciesDir + "/org.example.extra-2.0.jar",
		runtime.DependenciesDir + "/org.example.lib-1.1.jar"}
	slices.Sort(names)
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("the new layer holds %v, want %v", names, want)
	}
	if second.Archive.Why != "no training start ran" {
		t.Errorf("the second kit says %+v of its archive", second.Archive)
	}
	if second.Added != 2 || len(second.Artifacts) != 3 {
		t.Errorf("the second kit adds %d, holds %d", second.Added, len(second.Artifacts))
	}
}

func TestAQuarkusKitHoldsTheApplicationMavenBuiltAndAKitOnAParentOnlyWhatDiffers(t *testing.T) {
	ctx := context.Background()
	reg := imagetest.StartRegistry(t).Config()
	pushBase(t, reg, 1)
	app := func(files map[string]string) string {
		dir := t.TempDir()
		for name, content := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	req := Request{Project: maven.NewProject(runtime.Quarkus, "3.31.2", nil, nil), BaseImage: "base:1",
		RegistryAddress: reg.Address, Insecure: true, Repository: "kit-q"}
	first, err := RunApplication(ctx, req, app(map[string]string{"quarkus-run.jar": "run 1", "quarkus/quarkus-application.dat": "app 1",
		"lib/main/org.apache.camel.camel-core-engine-4.17.0.jar": "core"}), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, files := kitFiles(t, reg, first.Image)
	if string(files[runtime.DependenciesDir+"/quarkus/quarkus-application.dat"]) != "app 1" ||
		string(files[runtime.DependenciesDir+"/lib/main/org.apache.camel.camel-core-engine-4.17.0.jar"]) != "core" {
		t.Errorf("the kit image does not hold the application as Maven built it: %v", slices.Collect(maps.Keys(files)))
	}
	if first.Added != 3 || first.Archive.Why != "no training start ran" {
		t.Errorf("the result: %d added, archive %+v", first.Added, first.Archive)
	}

	t.Log("a kit with one more extension rebuilds the application: its layer holds what differs")
	req.Repository, req.Parent = "kit-q2", &build.Parent{Image: first.Image, Artifacts: StatusArtifacts(first.Artifacts)}
	second, err := RunApplication(ctx, req, app(map[string]string{"quarkus-run.jar": "run 1", "quarkus/quarkus-application.dat": "app 2",
		"lib/main/org.apache.camel.camel-core-engine-4.17.0.jar": "core", "lib/main/org.apache.camel.camel-http-4.17.0.jar": "http"}), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, top := kitFiles(t, reg, second.Image)
	names := slices.Sorted(maps.Keys(top))
	want := []string{runtime.DependenciesDir + "/lib/main/org.apache.camel.camel-http-4.17.0.jar", runtime.DependenciesDir + "/quarkus/quarkus-application.dat"}
	if !slices.Equal(names, want) || second.Added != 2 {
		t.Errorf("the new layer holds %v (%d added), want %v", names, second.Added, want)
	}
	if _, err := RunApplication(ctx, req, t.TempDir(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "holds no file") {
		t.Errorf("an empty application: %v", err)
	}
}
