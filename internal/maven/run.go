package maven

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// Artifact is one resolved jar of a kit.
type Artifact struct {
	// ID is the Maven coordinate, group:artifact:type[:classifier]:version.
	ID string `json:"id"`
	// Location is the jar's path in the kit image.
	Location string `json:"location"`
	// Checksum is the jar's sha256, as sha256:HEX.
	Checksum string `json:"checksum"`
	// File is where Maven put the jar in its local repository.
	File string `json:"-"`
}

// ListArgs are Maven's arguments that resolve the project in the working directory and
// list every runtime jar with its file in the local repository.
func ListArgs(listFile, localRepository string) []string {
	// Batch mode logs each download as one line, which Downloaded counts.
	return []string{"-B", "-Dmaven.repo.local=" + localRepository,
		DependencyPlugin + ":list", "-DoutputFile=" + listFile,
		"-DoutputAbsoluteArtifactFilename=true", "-DincludeScope=runtime", "-DappendOutput=false"}
}

// PackageArgs are Maven's arguments that build the application of the project in the working
// directory, without its tests.
func PackageArgs(localRepository string) []string {
	return []string{"-B", "-Dmaven.repo.local=" + localRepository, "package", "-Dmaven.test.skip=true"}
}

// ReadList reads and parses the dependency list Maven wrote to file.
func ReadList(file string) ([]Artifact, error) {
	out, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading Maven's dependency list: %w", err)
	}
	return ParseList(out)
}

// ParseList reads the dependency plugin's list: one jar a line, as
// group:artifact:type[:classifier]:version:scope:/path [-- module name].
func ParseList(out []byte) ([]Artifact, error) {
	var arts []Artifact
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "The following files have been resolved") || line == "none" {
			continue
		}
		line, _, _ = strings.Cut(line, " -- ")
		coords, path, ok := strings.Cut(line, ":/")
		if !ok {
			return nil, fmt.Errorf("reading Maven's dependency list: %q names no file", line)
		}
		parts := strings.Split(coords, ":")
		if len(parts) < 5 || len(parts) > 6 {
			return nil, fmt.Errorf("reading Maven's dependency list: %q is not group:artifact:type[:classifier]:version:scope", coords)
		}
		parts = parts[:len(parts)-1] // the scope
		arts = append(arts, Artifact{ID: strings.Join(parts, ":"), File: "/" + path,
			Location: runtime.DependenciesDir + "/" + jarName(parts)})
	}
	return arts, sc.Err()
}

// jarName names a jar in the image by its coordinate, so that two artifacts
// of one name in different groups never collide.
func jarName(parts []string) string {
	group, artifact, typ, version := parts[0], parts[1], parts[2], parts[len(parts)-1]
	name := group + "." + artifact + "-" + version
	if len(parts) == 5 {
		name += "-" + parts[3]
	}
	return name + "." + typ
}

var (
	// downloaded is Maven's line for a file it downloaded, with its size.
	downloaded = regexp.MustCompile(`(?m)^\[INFO\] Downloaded from \S+: \S+ \(([0-9.]+) (B|kB|MB|GB) at`)
	// missingVersion is Maven's error for a dependency that the BOM does not know.
	missingVersion = regexp.MustCompile(`'dependencies\.dependency\.version' for ([^:\s]+):([^:\s]+):\S+ is missing`)
	// notFound is Maven's error for an artifact that no repository holds.
	notFound = regexp.MustCompile(`Could not find artifact (\S+) in (\S+)`)
	// blockedHTTP is Maven's error for repositories over plain HTTP, which its default mirror
	// maven-default-http-blocker refuses (Maven 3.8.1 on), listing them as "ID (URL, ...)".
	blockedHTTP = regexp.MustCompile(`(?m)Blocked mirror for repositories: \[(.*?)\](?: -> \[Help.*)?$`)
	// blockedRepository is one repository of that list.
	blockedRepository = regexp.MustCompile(`(\S+) \((\S+?),`)
	// notTransferred is Maven's error for a repository it could not reach.
	notTransferred = regexp.MustCompile(`(?m)Could not transfer artifact (\S+) from/to (\S+ \(\S+\)): (.*?)(?: -> \[Help.*)?$`)
)

// Downloads counts what Maven downloaded in one run.
type Downloads struct {
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
}

// Downloaded reads Maven's batch-mode log for the files it downloaded and
// their sizes, which Maven prints in units of 1000 bytes.
func Downloaded(log []byte) Downloads {
	unit := map[string]float64{"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}
	var d Downloads
	for _, m := range downloaded.FindAllSubmatch(log, -1) {
		size, err := strconv.ParseFloat(string(m[1]), 64)
		if err != nil {
			continue
		}
		d.Files++
		d.Bytes += int64(size * unit[string(m[2])])
	}
	return d
}

// Explain explains a failed Maven run from its output: a build.Failure when the
// input names something that does not exist, another error when a
// repository could not be reached or anything else went wrong.
func Explain(out []byte, camelVersion string, runErr error) error {
	text := string(out)
	if m := blockedHTTP.FindStringSubmatch(text); m != nil {
		var repos []string
		for _, r := range blockedRepository.FindAllStringSubmatch(m[1], -1) {
			repos = append(repos, r[1]+" ("+r[2]+")")
		}
		return &build.Failure{Message: fmt.Sprintf("Maven refuses the plain-HTTP repository %s: it reaches repositories over HTTPS only "+
			"(its default mirror maven-default-http-blocker; only localhost is spared), as on Camel K. Serve it over HTTPS "+
			"(a private CA goes in the platform's spec.build.maven.caSecrets), or lift the block in the platform's Maven settings "+
			"(spec.build.maven.settings): a mirror of id maven-default-http-blocker, mirrorOf external:dummy:*, blocked false",
			strings.Join(repos, ", "))}
	}
	// A repository that cannot be reached also leaves the BOM's versions
	// missing: it comes first.
	if m := notTransferred.FindStringSubmatch(text); m != nil {
		return fmt.Errorf("the Maven repository %s could not be reached for %s: %s", m[2], m[1], strings.TrimSpace(m[3]))
	}
	if m := missingVersion.FindStringSubmatch(text); m != nil {
		if m[1] == "org.apache.camel" {
			return &build.Failure{Message: fmt.Sprintf("camel:%s is not a component of Camel %s: Camel's BOM pins no %s:%s (Maven: %s)",
				strings.TrimPrefix(m[2], "camel-"), camelVersion, m[1], m[2], strings.TrimSpace(m[0]))}
		}
		return &build.Failure{Message: fmt.Sprintf("mvn:%s:%s names no version and Camel's BOM pins none: write mvn:%s:%s:VERSION (Maven: %s)",
			m[1], m[2], m[1], m[2], strings.TrimSpace(m[0]))}
	}
	if m := notFound.FindStringSubmatch(text); m != nil {
		return &build.Failure{Message: fmt.Sprintf("no repository holds %s (Maven: %s)", m[1], strings.TrimSpace(m[0]))}
	}
	return fmt.Errorf("maven failed: %w; its last errors:\n%s", runErr, lastErrors(text, 10))
}

// lastErrors is the last n [ERROR] lines of Maven's output.
func lastErrors(out string, n int) string {
	var errs []string
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(line, "[ERROR]") && strings.TrimSpace(strings.TrimPrefix(line, "[ERROR]")) != "" {
			errs = append(errs, line)
		}
	}
	return strings.Join(errs[max(0, len(errs)-n):], "\n")
}
