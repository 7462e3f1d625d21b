// Command catalog writes internal/catalog/catalog.json from Camel's own catalog
// (org.apache.camel:camel-catalog) of one release, and from the Camel modules the
// runtime's dependency set brings. It runs Maven, so it needs mvn, java and a Maven
// repository; run it from the root of the source tree when Camel's version changes:
//
//	go run ./hack/catalog [-camel-version 4.18.0]
package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/caravan-dev/caravan/internal/catalog"
	"github.com/caravan-dev/caravan/internal/maven"
	"github.com/caravan-dev/caravan/internal/runtime"
)

const catalogDir = "org/apache/camel/catalog/"

func main() {
	version := flag.String("camel-version", runtime.DefaultCamelVersion, "the Camel release to read")
	out := flag.String("o", filepath.Join("internal", "catalog", catalog.File), "the file to write")
	flag.Parse()
	if err := run(*version, *out); err != nil {
		fmt.Fprintln(os.Stderr, "catalog:", err)
		os.Exit(1)
	}
}

func run(version, out string) error {
	work, err := os.MkdirTemp("", "caravan-catalog-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	fmt.Printf("fetching camel-catalog %s with Maven\n", version)
	if err := mvn(work, maven.DependencyPlugin+":copy", "-Dartifact="+runtime.CamelGroup+":camel-catalog:"+version,
		"-DoutputDirectory="+work, "-Dmdep.stripVersion=true"); err != nil {
		return err
	}
	c := &catalog.Catalog{CamelVersion: version}
	if err := readCatalog(filepath.Join(work, "camel-catalog.jar"), c); err != nil {
		return err
	}

	fmt.Println("resolving the runtime's dependency set with Maven")
	if c.Runtime, err = runtimeModules(work, version); err != nil {
		return err
	}

	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d schemes, %d data formats, %d languages, %d runtime modules\n", out,
		len(c.Components), len(c.DataFormats), len(c.Languages), len(c.Runtime.Modules))
	return nil
}

// mvn runs Maven in dir, quietly, in batch mode; its output is shown when it fails.
func mvn(dir string, args ...string) error {
	cmd := exec.Command("mvn", append([]string{"-B", "-q"}, args...)...)
	cmd.Dir = dir
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("mvn %s: %w\n%s", strings.Join(args, " "), err, log.String())
	}
	return nil
}

// entry is the part of a component, data format or language JSON file the table uses.
type entry struct {
	Name               string `json:"name"`
	Scheme             string `json:"scheme"`
	AlternativeSchemes string `json:"alternativeSchemes"`
	ModelName          string `json:"modelName"`
	GroupID            string `json:"groupId"`
	ArtifactID         string `json:"artifactId"`
}

// readCatalog fills c's components, data formats and languages from the catalog jar.
func readCatalog(jar string, c *catalog.Catalog) error {
	z, err := zip.OpenReader(jar)
	if err != nil {
		return err
	}
	defer z.Close()
	c.Components, c.DataFormats, c.DataFormatModels, c.Languages =
		map[string]string{}, map[string]string{}, map[string]string{}, map[string]string{}
	models := map[string][]entry{}
	for _, f := range z.File {
		dir, name := path.Split(f.Name)
		kind, ok := strings.CutPrefix(dir, catalogDir)
		if !ok || path.Ext(name) != ".json" || !slices.Contains([]string{"components/", "dataformats/", "languages/"}, kind) {
			continue
		}
		e, err := readEntry(f)
		if err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
		if e.GroupID != runtime.CamelGroup || !strings.HasPrefix(e.ArtifactID, "camel-") {
			return fmt.Errorf("%s: %s:%s is not one of Camel's modules: the table cannot name it", f.Name, e.GroupID, e.ArtifactID)
		}
		switch kind {
		case "components/":
			for _, s := range append(strings.Split(e.AlternativeSchemes, ","), e.Scheme) {
				if s = strings.TrimSpace(s); s != "" {
					c.Components[s] = e.ArtifactID
				}
			}
		case "dataformats/":
			c.DataFormats[e.Name] = e.ArtifactID
			models[e.ModelName] = append(models[e.ModelName], e)
		case "languages/":
			c.Languages[e.Name] = e.ArtifactID
			if e.ModelName != "" && e.ModelName != e.Name {
				if _, taken := c.Languages[e.ModelName]; !taken {
					c.Languages[e.ModelName] = e.ArtifactID
				}
			}
		}
	}
	for model, es := range models {
		if m, ok := defaultDataFormat(model, es); ok {
			c.DataFormatModels[model] = m
		}
	}
	if len(c.Components) == 0 || len(c.DataFormats) == 0 || len(c.Languages) == 0 {
		return fmt.Errorf("%s holds no component, data format or language under %s", jar, catalogDir)
	}
	return nil
}

func readEntry(f *zip.File) (entry, error) {
	r, err := f.Open()
	if err != nil {
		return entry{}, err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return entry{}, err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return entry{}, err
	}
	for _, k := range []string{"component", "dataformat", "language"} {
		if raw, ok := doc[k]; ok {
			var e entry
			err := json.Unmarshal(raw, &e)
			return e, err
		}
	}
	return entry{}, fmt.Errorf("no component, dataformat or language object")
}

// defaultDataFormat is the module a route's data format (json, avro, ...) needs when it
// names no library. That is the only module, else the data format of the same name,
// else, for json, Jackson, which Camel takes when no library is set.
func defaultDataFormat(model string, es []entry) (string, bool) {
	first := es[0].ArtifactID
	if !slices.ContainsFunc(es, func(e entry) bool { return e.ArtifactID != first }) {
		return first, true
	}
	want := model
	if model == "json" {
		want = "jackson"
	}
	for _, e := range es {
		if e.Name == want {
			return e.ArtifactID, true
		}
	}
	return "", false
}

// runtimeModules resolves the runtime's dependency set with Maven and returns the
// Camel modules it brings.
func runtimeModules(work, version string) (catalog.Runtime, error) {
	deps := runtime.Main.Modules()
	pom, err := maven.NewProject(runtime.Main, version, nil, nil).POM()
	if err != nil {
		return catalog.Runtime{}, err
	}
	if err := os.WriteFile(filepath.Join(work, "pom.xml"), pom, 0o644); err != nil {
		return catalog.Runtime{}, err
	}
	list := filepath.Join(work, "dependencies.txt")
	if err := mvn(work, maven.DependencyPlugin+":list", "-DincludeScope=runtime", "-DoutputFile="+list); err != nil {
		return catalog.Runtime{}, err
	}
	f, err := os.Open(list)
	if err != nil {
		return catalog.Runtime{}, err
	}
	defer f.Close()
	var rt catalog.Runtime
	for _, d := range deps {
		rt.Roots = append(rt.Roots, d.GroupID+":"+d.ArtifactID)
	}
	slices.Sort(rt.Roots)
	// Lines read "   group:artifact:type:version:scope", with a classifier sometimes.
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Split(strings.TrimSpace(sc.Text()), ":")
		if len(parts) >= 5 && parts[0] == runtime.CamelGroup {
			rt.Modules = append(rt.Modules, parts[1])
		}
	}
	if err := sc.Err(); err != nil {
		return catalog.Runtime{}, err
	}
	slices.Sort(rt.Modules)
	rt.Modules = slices.Compact(rt.Modules)
	if len(rt.Modules) == 0 {
		return catalog.Runtime{}, fmt.Errorf("maven listed no Camel module for the runtime's dependency set")
	}
	return rt, nil
}
