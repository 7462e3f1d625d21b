package buildcontroller

import (
	"slices"
	"testing"

	"github.com/caravan-dev/caravan/internal/kit"
	"github.com/caravan-dev/caravan/internal/platform"
)

func TestMavenGetsThePlatformsArgumentsThenTheKitsBuildProperties(t *testing.T) {
	m := platform.Maven{Properties: map[string]string{"shared": "platform"}, CLIOptions: []string{"-V"}}
	got := mavenArgs(m, kit.Spec{BuildProperties: []string{"shared=kit", "quarkus.banner.enabled=false"}})
	want := []string{"-Dshared=platform", "-V", "-Dshared=kit", "-Dquarkus.banner.enabled=false"}
	if !slices.Equal(got, want) {
		t.Errorf("Maven's arguments %q, want %q (Maven keeps the last -D of a key)", got, want)
	}
}
