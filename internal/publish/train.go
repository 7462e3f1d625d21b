package publish

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/caravan-dev/caravan/internal/maven"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// A kit's class-data-sharing archive: Layout lays the kit's jars out as its image will hold
// them, dated as its layers date them (the JVM checks both), with the training start's files;
// the base image's JVM then starts the training with ArgsFile's arguments and writes the archive at
// exit into the training directory; the publish step adds it to the kit's layer.

// Files of the training directory.
const (
	// ArgsFile holds the training start's java arguments, one a line, as java @FILE reads them.
	ArgsFile = "java.args"
	// ArchiveFile is the archive the training start writes at exit.
	ArchiveFile = "kit.jsa"
	// ClasspathFile is a copy of the classpath jar the training start ran with.
	ClasspathFile = "kit-classpath.jar"
	// LogFile is the JVM's log of the archive it wrote.
	LogFile = "training.log"
)

// Archive says whether a kit image holds a class-data-sharing archive, and why not.
type Archive struct {
	// Classes counts the classes archived; 0 when there is no archive.
	Classes int `json:"classes,omitempty"`
	// Size is the archive's size in bytes.
	Size int64 `json:"size,omitempty"`
	// Why says why the kit has no archive.
	Why string `json:"why,omitempty"`
}

// Layout lays out the files of list (the jars Maven resolved, or the application it built) under
// root as a kit image holds them, with the classpath jar, dated as the kit's layers date them, and
// the provider's training files; it writes the training's java arguments and a copy of the
// classpath jar into trainDir.
func Layout(list []maven.Artifact, root, trainDir string, p runtime.Provider) error {
	var locations []string
	for _, a := range list {
		dst := filepath.Join(root, a.Location)
		if err := copyFile(a.File, dst); err != nil {
			return fmt.Errorf("laying out %s: %w", a.ID, err)
		}
		locations = append(locations, a.Location)
	}
	jar, err := runtime.ClasspathManifest(p.ClasspathJars(locations))
	if err != nil {
		return err
	}
	files := map[string][]byte{runtime.ClasspathJar: jar}
	for name, data := range p.Training() {
		files[name] = data
	}
	for name, data := range files {
		if err := writeDated(filepath.Join(root, name), data); err != nil {
			return err
		}
	}
	if err := writeDated(filepath.Join(trainDir, ClasspathFile), jar); err != nil {
		return err
	}
	_, args := p.Command(runtime.Launch{KitClasspathJar: true,
		// C1 alone and the serial collector: what the JIT and the collector do leaves the archive
		// as it is, and the builder pod's CPU goes to loading the classes.
		JVMOptions: []string{"-XX:ArchiveClassesAtExit=" + filepath.Join(trainDir, ArchiveFile), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xlog:cds=off",
			"-Xlog:cds+dynamic=info:file=" + filepath.Join(trainDir, LogFile)}})
	return os.WriteFile(filepath.Join(trainDir, ArgsFile), []byte(strings.Join(args, "\n")+"\n"), 0o644)
}

// copyFile copies src to dst, dated as the kit's layers are.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chtimes(dst, layerTime, layerTime)
}

// writeDated writes data to path, dated as the kit's layers are.
func writeDated(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	return os.Chtimes(path, layerTime, layerTime)
}

// archivedClasses is the JVM's line for the dynamic archive it wrote.
var archivedClasses = regexp.MustCompile(`\] (\d+) klasses; \d+ symbols`)

// ReadTraining reads what the training start left in trainDir: the archive to add to the kit's
// layer ("" for none) and what it holds, or why there is none.
func ReadTraining(trainDir string) (string, Archive) {
	if _, err := os.Stat(filepath.Join(trainDir, ArgsFile)); errors.Is(err, os.ErrNotExist) {
		return "", Archive{Why: "no training start ran"}
	}
	log, _ := os.ReadFile(filepath.Join(trainDir, LogFile))
	path := filepath.Join(trainDir, ArchiveFile)
	st, err := os.Stat(path)
	if err != nil {
		return "", Archive{Why: "the training start wrote no archive: " + lastLines(log, 5, 800)}
	}
	a := Archive{Size: st.Size()}
	if m := archivedClasses.FindSubmatch(log); m != nil {
		a.Classes, _ = strconv.Atoi(string(m[1]))
	}
	return path, a
}

// lastLines are the last n lines of out, at most max bytes of them.
func lastLines(out []byte, n, max int) string {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	s := string(bytes.Join(lines, []byte(" / ")))
	if len(s) > max {
		s = "..." + s[len(s)-max:]
	}
	if s == "" {
		return "no output"
	}
	return s
}
