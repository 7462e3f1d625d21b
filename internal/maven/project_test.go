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

func TestAProjectWithoutARuntimeVersionIsRefused(t *testing.T) {
	if _, err := (Project{}).POM(); err == nil {
		t.Fatal("a pom without Camel's version was written")
	}
}

func TestAQuarkusProjectImportsThePlatformsBOMsAndBuildsWithItsPlugin(t *testing.T) {
	p := NewProject(runtime.Quarkus, "3.31.2", []runtime.Coordinate{
		{GroupID: runtime.CamelGroup, ArtifactID: "camel-platform-http"},
		{GroupID: runtime.CamelGroup, ArtifactID: "camel-timer"},
		{GroupID: runtime.CamelGroup, ArtifactID: "camel-jdbc"},
		{GroupID: runtime.CamelGroup, ArtifactID: "camel-jdbc", Version: "4.17.0"},
		{GroupID: "io.quarkus", ArtifactID: "quarkus-jdbc-postgresql"}}, nil)
	out, err := p.POM()
	if err != nil {
		t.Fatal(err)
	}
	pom := string(out)
	for _, want := range []string{
		"<packaging>jar</packaging>",
		"<quarkus.package.jar.type>fast-jar</quarkus.package.jar.type>",
		"<groupId>io.quarkus.platform</groupId>\n        <artifactId>quarkus-camel-bom</artifactId>\n        <version>3.31.2</version>\n        <type>pom</type>\n        <scope>import</scope>",
		"<groupId>io.quarkus.platform</groupId>\n        <artifactId>quarkus-bom</artifactId>\n        <version>3.31.2</version>",
		// camel:NAME is Camel Quarkus' extension; a component with its version stays as written.
		"<groupId>org.apache.camel.quarkus</groupId>\n      <artifactId>camel-quarkus-platform-http</artifactId>",
		"<groupId>org.apache.camel</groupId>\n      <artifactId>camel-jdbc</artifactId>\n      <version>4.17.0</version>",
		"<artifactId>quarkus-jdbc-postgresql</artifactId>",
		"<artifactId>camel-quarkus-yaml-dsl</artifactId>",
		"<artifactId>quarkus-maven-plugin</artifactId>\n        <version>3.31.2</version>\n        <extensions>true</extensions>",
		"<goal>build</goal>",
	} {
		if !strings.Contains(pom, want) {
			t.Errorf("the pom lacks %q:\n%s", want, pom)
		}
	}
	if strings.Contains(pom, "camel-quarkus-jdbc") {
		t.Error("camel:jdbc, named with Camel's own artifact and its version, still adds the extension")
	}
	if strings.Count(pom, "<artifactId>camel-quarkus-timer</artifactId>") != 1 {
		t.Error("camel:timer is not the extension, once")
	}
	if strings.Index(pom, "quarkus-camel-bom") > strings.Index(pom, "<artifactId>quarkus-bom<") {
		t.Error("the platform's Camel BOM is not imported first, as Camel K imports it")
	}
	if app := string(p.Application()); !strings.Contains(app, "quarkus.camel.routes-discovery.enabled=false\n") {
		t.Errorf("the application's properties: %q", app)
	}
	if NewProject(runtime.Main, "4.18.0", nil, nil).Application() != nil {
		t.Error("a camel-main kit, which Maven does not build, has an application.properties")
	}
}
