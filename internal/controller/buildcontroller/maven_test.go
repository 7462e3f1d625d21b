package buildcontroller

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

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

func TestTheKitsBuildResourcesGoOverThePlatforms(t *testing.T) {
	c := platform.BuildConfiguration{RequestMemory: "1Gi", LimitCPU: "2"}
	got := mavenResources(c, kit.Spec{BuildResources: map[string]string{"requestCPU": "500m", "limitCPU": "1", "limitMemory": "2Gi"}})
	want := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")},
	}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("resources %v, want %v", got, want)
	}
}
