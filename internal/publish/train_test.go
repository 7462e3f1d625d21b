package publish

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caravan-dev/caravan/internal/maven"
	"github.com/caravan-dev/caravan/internal/runtime"
)

func TestTheLayoutIsTheKitImagesWithTheTrainingsArguments(t *testing.T) {
	repo, root, training := t.TempDir(), t.TempDir(), t.TempDir()
	var list []maven.Artifact
	for _, name := range []string{"org.example.zeta-1.0.jar", "org.example.alpha-2.0.jar"} {
		file := filepath.Join(repo, name)
		if err := os.WriteFile(file, []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		list = append(list, maven.Artifact{ID: name, File: file, Location: runtime.DependenciesDir + "/" + name})
	}
	if err := Layout(list, root, training, runtime.Main); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{runtime.DependenciesDir + "/org.example.zeta-1.0.jar", runtime.ClasspathJar} {
		st, err := os.Stat(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		// The JVM refuses an archive whose jars' times differ from those it was made with.
		if !st.ModTime().Equal(layerTime) {
			t.Errorf("%s is dated %s, not as the kit's layers date it (%s)", p, st.ModTime(), layerTime)
		}
	}
	for p := range runtime.Main.Training() {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("the training file %s: %v", p, err)
		}
	}
	jar, err := os.ReadFile(filepath.Join(root, runtime.ClasspathJar))
	if err != nil {
		t.Fatal(err)
	}
	if copied, err := os.ReadFile(filepath.Join(training, ClasspathFile)); err != nil || !bytes.Equal(copied, jar) {
		t.Errorf("the training directory's classpath jar differs from the laid-out one (%v)", err)
	}
	manifest := readManifest(t, jar)
	if want := "Class-Path: dependencies/org.example.alpha-2.0.jar dependencies/org.exam\r\n ple.zeta-1.0.jar\r\n"; !strings.Contains(manifest, want) {
		t.Errorf("the manifest is\n%q\nwant the sorted jars, relative, in lines of 72 bytes:\n%q", manifest, want)
	}
	args, err := os.ReadFile(filepath.Join(training, ArgsFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := "-XX:ArchiveClassesAtExit=" + filepath.Join(training, ArchiveFile) + "\n-XX:TieredStopAtLevel=1\n-XX:+UseSerialGC\n-Xlog:cds=off\n-Xlog:cds+dynamic=info:file=" + filepath.Join(training, LogFile) + "\n-cp\n" +
		runtime.ClasspathJar + "\n" + runtime.MainClass + "\n"; !strings.HasPrefix(string(args), want) {
		t.Errorf("the training's arguments are\n%s\nwant them to start\n%s", args, want)
	}
}

func TestTheTrainingSaysWhyThereIsNoArchive(t *testing.T) {
	dir := t.TempDir()
	if _, a := ReadTraining(dir); a.Why != "no training start ran" {
		t.Errorf("without a training: %+v", a)
	}
	os.WriteFile(filepath.Join(dir, ArgsFile), []byte("-cp\n"), 0o644)
	os.WriteFile(filepath.Join(dir, LogFile), []byte("[0.1s][warning][cds,dynamic] Cannot dump: not enough space\n"), 0o644)
	if path, a := ReadTraining(dir); path != "" || a.Why != "the training start wrote no archive: [0.1s][warning][cds,dynamic] Cannot dump: not enough space" {
		t.Errorf("after a start that wrote none: %q %+v", path, a)
	}
}

func readManifest(t *testing.T, jar []byte) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(jar), int64(len(jar)))
	if err != nil {
		t.Fatal(err)
	}
	f, err := zr.Open("META-INF/MANIFEST.MF")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestAQuarkusApplicationIsLaidOutWithAClasspathJarOfTheFastJarsDirectories(t *testing.T) {
	app, root, training := t.TempDir(), t.TempDir(), t.TempDir()
	for _, name := range []string{"quarkus-run.jar", "lib/boot/io.quarkus.quarkus-bootstrap-runner-3.31.2.jar", "lib/main/org.apache.camel.camel-core-engine-4.17.0.jar",
		"quarkus/generated-bytecode.jar", "quarkus/quarkus-application.dat"} {
		p := filepath.Join(app, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	arts, err := ApplicationArtifacts(app)
	if err != nil {
		t.Fatal(err)
	}
	if err := Layout(arts, root, training, runtime.Quarkus); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, runtime.DependenciesDir, "quarkus", "quarkus-application.dat")); err != nil {
		t.Errorf("the application is not laid out as the kit holds it: %v", err)
	}
	jar, err := os.ReadFile(filepath.Join(root, runtime.ClasspathJar))
	if err != nil {
		t.Fatal(err)
	}
	manifest := strings.ReplaceAll(readManifest(t, jar), "\r\n ", "")
	if want := "Class-Path: dependencies/lib/boot/io.quarkus.quarkus-bootstrap-runner-3.31.2.jar dependencies/lib/main/org.apache.camel.camel-core-engine-4.17.0.jar dependencies/quarkus-run.jar\r\n"; !strings.Contains(manifest, want) {
		t.Errorf("the manifest is\n%q\nwant the jars of the command line's directories alone:\n%q", manifest, want)
	}
	args, err := os.ReadFile(filepath.Join(training, ArgsFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := "\n-cp\n" + runtime.ClasspathJar + "\n" + runtime.QuarkusEntryPoint + "\n"; !strings.HasSuffix(string(args), want) {
		t.Errorf("the training's arguments are\n%s\nwant them to end\n%s", args, want)
	}
}
