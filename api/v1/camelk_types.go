package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The types in this file hold the fields of Camel K 2.x's API that Caravan does not act on, so
// that Camel K's operator, sharing these CRDs with Caravan's, keeps every field it writes. Caravan
// clears a status's share when it adopts a resource from Camel K's operator: nothing stale stays.

// CamelKIntegrationStatus holds the status fields of an Integration that only Camel K's operator writes.
type CamelKIntegrationStatus struct {
	// Jar is the integration's jar (Camel K).
	Jar string `json:"jar,omitempty"`
	// Dependencies are the dependencies the integration's kit is built with: Camel K's operator
	// resolves them, and Caravan's writes those of the kit it chose.
	Dependencies []string `json:"dependencies,omitempty"`
	// Profile is Camel K's trait profile.
	Profile string `json:"profile,omitempty"`
	// Traits are the traits Camel K's operator applied.
	Traits Traits `json:"traits,omitempty"`
	// GeneratedSources are the sources Camel K's operator generated.
	GeneratedSources []SourceSpec `json:"generatedSources,omitempty"`
	// RuntimeVersion is Camel K's runtime version.
	RuntimeVersion string `json:"runtimeVersion,omitempty"`
	// RuntimeProvider is Camel K's runtime provider.
	RuntimeProvider string `json:"runtimeProvider,omitempty"`
	// Catalog is the Camel catalog Camel K's operator used.
	Catalog *RawObject `json:"catalog,omitempty"`
	// Configuration is the configuration Camel K's operator applied.
	Configuration []ConfigurationSpec `json:"configuration,omitempty"`
	// Version is the version of Camel K's operator.
	Version string `json:"version,omitempty"`
	// Capabilities are the capabilities Camel K's operator enabled.
	Capabilities []string `json:"capabilities,omitempty"`
	// DeploymentTimestamp is when Camel K's operator last deployed the integration.
	DeploymentTimestamp *metav1.Time `json:"lastDeploymentTimestamp,omitempty"`
	// BuildTimestamp is when Camel K's operator last built the integration.
	BuildTimestamp *metav1.Time `json:"lastBuildTimestamp,omitempty"`
}

// CamelKKitStatus holds the status fields of an IntegrationKit that only Camel K's operator writes.
type CamelKKitStatus struct {
	// RootImage is the first image of the kit's chain (Camel K).
	RootImage string `json:"rootImage,omitempty"`
	// RuntimeVersion is Camel K's runtime version.
	RuntimeVersion string `json:"runtimeVersion,omitempty"`
	// RuntimeProvider is Camel K's runtime provider.
	RuntimeProvider string `json:"runtimeProvider,omitempty"`
	// Catalog is the Camel catalog Camel K's operator used.
	Catalog *RawObject `json:"catalog,omitempty"`
	// Platform is the IntegrationPlatform Camel K's operator used.
	Platform string `json:"platform,omitempty"`
	// Version is the version of Camel K's operator.
	Version string `json:"version,omitempty"`
}

// CamelKBuildSpec holds the spec fields of a Build that only Camel K's operator writes.
type CamelKBuildSpec struct {
	// Configuration is Camel K's build configuration.
	Configuration *RawObject `json:"configuration,omitempty"`
	// ToolImage is the image of Camel K's builder.
	ToolImage string `json:"toolImage,omitempty"`
	// OperatorNamespace is where Camel K's builder pods run.
	OperatorNamespace string `json:"operatorNamespace,omitempty"`
	// MaxRunningBuilds is Camel K's limit of concurrent builds.
	MaxRunningBuilds int32 `json:"maxRunningBuilds,omitempty"`
}

// CamelKBuildStatus holds the status fields of a Build that only Camel K's operator writes.
type CamelKBuildStatus struct {
	// RootImage is the first image of the build's chain (Camel K).
	RootImage string `json:"rootImage,omitempty"`
	// Error is Camel K's build error.
	Error string `json:"error,omitempty"`
}
