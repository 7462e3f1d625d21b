package platform

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

func TestResolveFillsDefaultsAndKeepsWhatIsSet(t *testing.T) {
	empty := Resolve(camelv1.IntegrationPlatformSpec{})
	if empty.Build.BaseImage != DefaultBaseImage || *empty.Build.MaxRunningBuilds != DefaultMaxRunningBuilds ||
		empty.Build.Timeout.Duration != DefaultBuildTimeout || empty.Cluster != DefaultCluster {
		t.Fatalf("defaults not filled: %+v", empty)
	}
	set := camelv1.IntegrationPlatformSpec{Build: camelv1.IntegrationPlatformBuildSpec{
		BaseImage: "example/base:1", MaxRunningBuilds: ptr.To[int32](7),
		Timeout: &metav1.Duration{Duration: time.Minute},
	}}
	got := Resolve(set)
	if got.Build.BaseImage != "example/base:1" || *got.Build.MaxRunningBuilds != 7 || got.Build.Timeout.Duration != time.Minute {
		t.Fatalf("set values not kept: %+v", got.Build)
	}
	if set.Build.RuntimeVersion != "" {
		t.Fatal("Resolve changed its input")
	}
}
