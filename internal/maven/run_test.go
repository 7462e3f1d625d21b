package maven

import (
	"errors"
	"strings"
	"testing"

	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// A list as the dependency plugin 3.11.0 writes it, abridged.
const listOutput = `
The following files have been resolved:
   org.apache.camel:camel-health:jar:4.18.0:compile:/m2/org/apache/camel/camel-health/4.18.0/camel-health-4.18.0.jar -- module camel.health (auto)
   org.slf4j:slf4j-api:jar:2.0.17:compile:/m2/org/slf4j/slf4j-api/2.0.17/slf4j-api-2.0.17.jar -- module org.slf4j
   io.netty:netty-transport-native-epoll:jar:linux-x86_64:4.1.130.Final:runtime:/m2/io/netty/e/4.1.130.Final/e.jar
`

func TestMavensListGivesEachJarItsCoordinateAndAPlaceInTheImage(t *testing.T) {
	arts, err := ParseList([]byte(listOutput))
	if err != nil {
		t.Fatal(err)
	}
	want := []Artifact{
		{ID: "org.apache.camel:camel-health:jar:4.18.0", Location: runtime.DependenciesDir + "/org.apache.camel.camel-health-4.18.0.jar",
			File: "/m2/org/apache/camel/camel-health/4.18.0/camel-health-4.18.0.jar"},
		{ID: "org.slf4j:slf4j-api:jar:2.0.17", Location: runtime.DependenciesDir + "/org.slf4j.slf4j-api-2.0.17.jar",
			File: "/m2/org/slf4j/slf4j-api/2.0.17/slf4j-api-2.0.17.jar"},
		{ID: "io.netty:netty-transport-native-epoll:jar:linux-x86_64:4.1.130.Final",
			Location: runtime.DependenciesDir + "/io.netty.netty-transport-native-epoll-4.1.130.Final-linux-x86_64.jar",
			File:     "/m2/io/netty/e/4.1.130.Final/e.jar"},
	}
	if len(arts) != len(want) {
		t.Fatalf("got %d artifacts, want %d: %+v", len(arts), len(want), arts)
	}
	for i := range want {
		if arts[i] != want[i] {
			t.Errorf("artifact %d: got %+v, want %+v", i, arts[i], want[i])
		}
	}
}

func TestALineOfTheListThatNamesNoFileIsAnError(t *testing.T) {
	if _, err := ParseList([]byte("   org.example:lib:jar:1.0:compile\n")); err == nil {
		t.Fatal("a line without a file was read")
	}
}

func TestMavensErrorsTellAWrongDependencyFromARepositoryThatIsDown(t *testing.T) {
	for _, c := range []struct {
		name, output string
		failure      bool
		want         string
	}{{
		name: "a Camel component that the BOM does not know is a failure naming it",
		output: `[ERROR] 'dependencies.dependency.version' for org.apache.camel:camel-no-such-component:jar is missing. @ line 27, column 17
[ERROR] The build could not read 1 project -> [Help 1]`,
		failure: true,
		want:    "camel:no-such-component is not a component of Camel 4.18.0",
	}, {
		name:    "an artifact without a version that the BOM does not pin is a failure",
		output:  `[ERROR] 'dependencies.dependency.version' for org.example:lib:jar is missing. @ line 27, column 17`,
		failure: true,
		want:    "write mvn:org.example:lib:VERSION",
	}, {
		name:    "an artifact no repository holds is a failure naming it",
		output:  `[ERROR] Failed to execute goal on project kit: Could not resolve dependencies for project dev.caravan.kit:kit:pom:1: Could not find artifact org.apache.camel:camel-jackson:jar:9.9.9 in central (https://repo.example/maven2) -> [Help 1]`,
		failure: true,
		want:    "no repository holds org.apache.camel:camel-jackson:jar:9.9.9",
	}, {
		name: "a repository that cannot be reached is no failure, though the BOM's versions are then missing",
		output: `[ERROR] Non-resolvable import POM: Could not transfer artifact org.apache.camel:camel-bom:pom:4.18.0 from/to down (http://127.0.0.1:1/maven): transfer failed for http://127.0.0.1:1/maven/org/apache/camel/camel-bom/4.18.0/camel-bom-4.18.0.pom @ line 13, column 19
[ERROR] 'dependencies.dependency.version' for org.apache.camel:camel-health:jar is missing. @ line 23, column 17`,
		want: "the Maven repository down (http://127.0.0.1:1/maven) could not be reached for org.apache.camel:camel-bom:pom:4.18.0",
	}, {
		name:    "a repository over plain HTTP, which Maven blocks, is a failure naming it and what lifts the block",
		output:  `[ERROR] Failed to execute goal on project y: Could not resolve dependencies for project x:y:jar:1: Failed to collect dependencies at dev.caravan.e2e:greeting:jar:1.0: Failed to read artifact descriptor for dev.caravan.e2e:greeting:jar:1.0: Could not transfer artifact dev.caravan.e2e:greeting:pom:1.0 from/to maven-default-http-blocker (http://0.0.0.0/): Blocked mirror for repositories: [e2e-only (http://10.88.0.1:39543/, default, releases+snapshots), other (http://repo.example/m2, default, releases)] -> [Help 1]`,
		failure: true,
		want: "Maven refuses the plain-HTTP repository e2e-only (http://10.88.0.1:39543/), other (http://repo.example/m2): " +
			"it reaches repositories over HTTPS only",
	}, {
		name:   "anything else quotes Maven's last errors",
		output: "[INFO] x\n[ERROR] something new\n",
		want:   "[ERROR] something new",
	}} {
		t.Run(c.name, func(t *testing.T) {
			err := Explain([]byte(c.output), "4.18.0", errors.New("exit status 1"))
			if build.IsFailure(err) != c.failure || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v (failure %t), want %q (failure %t)", err, build.IsFailure(err), c.want, c.failure)
			}
		})
	}
}

func TestDownloadedCountsTheFilesAndBytesOfMavensBatchLog(t *testing.T) {
	log := []byte(`[INFO] Scanning for projects...
[INFO] Downloading from central: https://repo.example/org/apache/camel/camel-bom/4.18.0/camel-bom-4.18.0.pom
[INFO] Downloaded from central: https://repo.example/org/apache/camel/camel-bom/4.18.0/camel-bom-4.18.0.pom (215 kB at 1.2 MB/s)
[INFO] Downloaded from mirror: https://mirror.example/x/y-1.jar (1.5 MB at 3 MB/s)
[INFO] Downloaded from central: https://repo.example/x/y-1.jar.sha1 (40 B at 1 kB/s)
[INFO] BUILD SUCCESS
`)
	got := Downloaded(log)
	if got.Files != 3 || got.Bytes != 215_000+1_500_000+40 {
		t.Fatalf("Downloaded = %+v", got)
	}
	if none := Downloaded([]byte("[INFO] BUILD SUCCESS\n")); none.Files != 0 || none.Bytes != 0 {
		t.Fatalf("a run that downloaded nothing counts %+v", none)
	}
}
