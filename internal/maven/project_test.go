package maven

import (
	"strings"
	"testing"

	"github.com/caravan-dev/caravan/internal/runtime"
)

func TestThePOMImportsCamelsBOMAndListsEachDependencyOnceSorted(t *testing.T) {
	p := NewProject(runtime.Main, "4.18.0", []runtime.Coordinate{
		{GroupID: runtime.CamelGroup, ArtifactID: "camel-http"},
		{GroupID: runtime.CamelGroup, ArtifactID: "camel-main"}}, []string{"http://127.0.0.1:8081/repo"})
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
