package maven

import (
	"strings"
	"testing"
)

func TestDependenciesAreReadAsCamelKWritesThem(t *testing.T) {
	for dep, want := range map[string]string{
		"camel:http":                                  "org.apache.camel:camel-http",
		"camel-jackson":                               "org.apache.camel:camel-jackson",
		" camel:kafka ":                               "org.apache.camel:camel-kafka",
		"mvn:org.apache.commons:commons-lang3":        "org.apache.commons:commons-lang3",
		"mvn:org.example:lib:1.0":                     "org.example:lib:1.0",
		"mvn:org.example:lib:jar:1.0":                 "org.example:lib:jar:1.0",
		"mvn:org.example:lib:jar:tests:1.0":           "org.example:lib:jar:tests:1.0",
		"mvn:org.apache.commons:commons-lang3:3.17.0": "org.apache.commons:commons-lang3:3.17.0",
	} {
		got, err := ParseDependency(dep)
		if err != nil || got.String() != want {
			t.Errorf("%q: got %q, %v; want %q", dep, got, err, want)
		}
	}
}

func TestADependencyThatIsNoCoordinateIsRefusedWithWhatToWrite(t *testing.T) {
	for dep, want := range map[string]string{
		"camel:":                  "names no Camel component",
		"camel:a:b":               "names no Camel component",
		"mvn:org.example":         "is not a Maven coordinate",
		"mvn::lib:1.0":            "is not a Maven coordinate",
		"mvn:a:b:c:d:e:f":         "is not a Maven coordinate",
		"mvn:org.example:<lib>:1": "is not a Maven coordinate",
		"github:apache/camel":     "is neither camel:NAME nor mvn:",
	} {
		_, err := ParseDependency(dep)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error saying %q", dep, err, want)
		}
	}
}

func TestThePOMImportsCamelsBOMAndListsEachDependencyOnceSorted(t *testing.T) {
	p := Project{CamelVersion: "4.18.0", Repositories: []string{"http://127.0.0.1:8081/repo"},
		Dependencies: append(RuntimeDependencies(),
			Coordinate{GroupID: CamelGroup, ArtifactID: "camel-http"},
			Coordinate{GroupID: CamelGroup, ArtifactID: "camel-main"})}
	out, err := p.POM()
	if err != nil {
		t.Fatal(err)
	}
	pom := string(out)
	for _, want := range []string{
		"<artifactId>camel-bom</artifactId>\n        <version>4.18.0</version>\n        <type>pom</type>\n        <scope>import</scope>",
		"<artifactId>slf4j-simple</artifactId>\n      <version>2.0.20</version>",
		"<url>http://127.0.0.1:8081/repo</url>",
	} {
		if !strings.Contains(pom, want) {
			t.Errorf("the pom lacks %q:\n%s", want, pom)
		}
	}
	if n := strings.Count(pom, "<artifactId>camel-main</artifactId>"); n != 1 {
		t.Errorf("camel-main is listed %d times", n)
	}
	if strings.Index(pom, "camel-http<") > strings.Index(pom, "camel-main<") {
		t.Error("the dependencies are not sorted")
	}
	again, _ := p.POM()
	if string(again) != pom {
		t.Error("the same project gave another pom")
	}
}

func TestAProjectWithoutACamelVersionIsRefused(t *testing.T) {
	if _, err := (Project{}).POM(); err == nil {
		t.Fatal("a pom without Camel's version was written")
	}
}
