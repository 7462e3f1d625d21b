// Package platform resolves an IntegrationPlatform's effective settings:
// what the user set, with Caravan's defaults filled in.
package platform

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// Defaults of a platform's build settings.
const (
	// DefaultBaseImage is the Java runtime made from Debian's packages
	// (caravan local up and caravan image push put it in a registry); a
	// name without a host is looked up in the platform's registry.
	DefaultBaseImage = "caravan/base:java17"
	// DefaultBuilderImage is the image of builder pods: the base image
	// with Maven.
	DefaultBuilderImage = "caravan/builder:java17"
	// DefaultRuntimeVersion is the version of Camel's BOM that kits
	// resolve: an LTS line whose every runtime module Maven serves.
	DefaultRuntimeVersion = "4.18.0"
	// DefaultRuntimeProvider is Camel's own main class, camel-main.
	DefaultRuntimeProvider  = "main"
	DefaultMaxRunningBuilds = 3
	DefaultBuildTimeout     = 5 * time.Minute
	DefaultCluster          = "Kubernetes"
)

// Resolve returns spec with every unset setting given its default.
func Resolve(spec camelv1.IntegrationPlatformSpec) camelv1.IntegrationPlatformSpec {
	out := *spec.DeepCopy()
	if out.Cluster == "" {
		out.Cluster = DefaultCluster
	}
	b := &out.Build
	if b.BaseImage == "" {
		b.BaseImage = DefaultBaseImage
	}
	if b.RuntimeVersion == "" {
		b.RuntimeVersion = DefaultRuntimeVersion
	}
	if b.RuntimeProvider == "" {
		b.RuntimeProvider = DefaultRuntimeProvider
	}
	if b.MaxRunningBuilds == nil || *b.MaxRunningBuilds == 0 {
		b.MaxRunningBuilds = ptr.To[int32](DefaultMaxRunningBuilds)
	}
	if b.Timeout == nil || b.Timeout.Duration <= 0 {
		b.Timeout = &metav1.Duration{Duration: DefaultBuildTimeout}
	}
	return out
}
