// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IntegrationPlatformSpec configures one operator: registry, base image, build settings
// and trait defaults.
type IntegrationPlatformSpec struct {
	// Cluster is the kind of cluster (Kubernetes, OpenShift).
	Cluster string `json:"cluster,omitempty"`
	// Profile is the default trait profile.
	Profile string `json:"profile,omitempty"`
	// Build configures how kits are built.
	Build IntegrationPlatformBuildSpec `json:"build,omitzero"`
	// Traits are trait defaults for every integration of this platform.
	Traits Traits `json:"traits,omitempty"`
	// Configuration is deprecated Camel K configuration; use traits.
	Configuration []ConfigurationSpec `json:"configuration,omitempty"`
	// Kamelet configures where Kamelets come from.
	Kamelet IntegrationPlatformKameletSpec `json:"kamelet,omitzero"`
}

// IntegrationPlatformBuildSpec configures kit builds.
type IntegrationPlatformBuildSpec struct {
	// Registry is where kit images are pushed and pulled.
	Registry RegistrySpec `json:"registry,omitzero"`
	// BaseImage is the image kit layers are added to.
	BaseImage string `json:"baseImage,omitempty"`
	// RuntimeVersion is the Camel runtime version.
	RuntimeVersion string `json:"runtimeVersion,omitempty"`
	// RuntimeProvider is the Camel runtime provider.
	RuntimeProvider string `json:"runtimeProvider,omitempty"`
	// RuntimeCoreVersion is the Camel core version.
	RuntimeCoreVersion string `json:"runtimeCoreVersion,omitempty"`
	// Timeout bounds the duration of one build.
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// MaxRunningBuilds limits the builds this operator runs at once; 0 means the default.
	// +kubebuilder:validation:Minimum=0
	MaxRunningBuilds *int32 `json:"maxRunningBuilds,omitempty"`
	// PublishStrategy is Camel K's image publish strategy, kept as written.
	PublishStrategy string `json:"publishStrategy,omitempty"`
	// PublishStrategyOptions are Camel K's publish strategy options, kept as written.
	PublishStrategyOptions map[string]string `json:"PublishStrategyOptions,omitempty"`
	// BuildConfiguration is Camel K's builder pod configuration, kept as written.
	BuildConfiguration *RawObject `json:"buildConfiguration,omitempty"`
	// Maven is Camel K's Maven configuration, kept as written.
	Maven *RawObject `json:"maven,omitempty"`
	// BuildCatalogToolTimeout is deprecated in Camel K and kept as written.
	BuildCatalogToolTimeout string `json:"buildCatalogToolTimeout,omitempty"`
}

// RegistrySpec locates a container registry.
type RegistrySpec struct {
	// Address is the registry host and port.
	Address string `json:"address,omitempty"`
	// Organization is the repository prefix in the registry.
	Organization string `json:"organization,omitempty"`
	// Secret names the Secret with the registry credentials.
	Secret string `json:"secret,omitempty"`
	// CA names a ConfigMap of the operator's namespace whose every key holds PEM
	// certificates that kit builds trust for the registry besides the system's.
	CA string `json:"ca,omitempty"`
	// Insecure allows plain HTTP or unverified TLS.
	Insecure bool `json:"insecure,omitempty"`
}

// IntegrationPlatformKameletSpec configures where Kamelets come from.
type IntegrationPlatformKameletSpec struct {
	// Repositories are Kamelet catalogs.
	Repositories []KameletRepositorySpec `json:"repositories,omitempty"`
	// Catalog tells whether the operator installs, into its namespace, the Kamelet catalog of its
	// Camel version (Camel's camel-kamelets artifact), as Camel K does; true when unset.
	Catalog *bool `json:"catalog,omitempty"`
}

// CatalogEnabled tells whether the operator installs the Kamelet catalog: unless Catalog is false.
func (k IntegrationPlatformKameletSpec) CatalogEnabled() bool { return k.Catalog == nil || *k.Catalog }

// KameletRepositorySpec is one Kamelet catalog.
type KameletRepositorySpec struct {
	// URI locates the catalog.
	URI string `json:"uri,omitempty"`
}

// IntegrationPlatformPhase is a label for where a platform is, computed from observed facts.
type IntegrationPlatformPhase string

// IntegrationPlatform phases.
const (
	IntegrationPlatformPhaseNone     IntegrationPlatformPhase = ""
	IntegrationPlatformPhaseCreating IntegrationPlatformPhase = "Creating"
	IntegrationPlatformPhaseReady    IntegrationPlatformPhase = "Ready"
	IntegrationPlatformPhaseError    IntegrationPlatformPhase = "Error"
)

// IntegrationPlatformStatus is the platform with defaults resolved, plus what was observed.
type IntegrationPlatformStatus struct {
	// IntegrationPlatformSpec is the effective configuration, defaults filled in.
	IntegrationPlatformSpec `json:",inline"`
	CommonStatus            `json:",inline"`
	// Phase summarises the status.
	Phase IntegrationPlatformPhase `json:"phase,omitempty"`
	// Version is the version of the operator that reconciled the platform.
	Version string `json:"version,omitempty"`
	// Info holds informational key/values about the platform.
	Info map[string]string `json:"info,omitempty"`
}

// IntegrationPlatform configures one operator; it is named by the operator id.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=integrationplatforms,scope=Namespaced,shortName=itp,categories=kamel;camel
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="The integration platform phase"
// +kubebuilder:printcolumn:name="Registry address",type=string,JSONPath=`.status.build.registry.address`,description="The container registry address"
// +kubebuilder:printcolumn:name="Default runtime",type=string,JSONPath=`.status.build.runtimeVersion`,description="The default runtime version"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="Whether the platform is ready"
// +kubebuilder:printcolumn:name="Operator",type=string,JSONPath=`.metadata.annotations.camel\.apache\.org/operator\.id`,description="The operator the platform belongs to"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type IntegrationPlatform struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired platform configuration.
	Spec IntegrationPlatformSpec `json:"spec,omitzero"`
	// Status is the effective configuration and observed state.
	Status IntegrationPlatformStatus `json:"status,omitzero"`
}

// OperatorID returns the id of the operator the platform belongs to, or "".
func (in *IntegrationPlatform) OperatorID() string { return operatorID(in) }

// IntegrationPlatformList is a list of IntegrationPlatforms.
// +kubebuilder:object:root=true
type IntegrationPlatformList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the platforms.
	Items []IntegrationPlatform `json:"items"`
}

func init() {
	SchemeBuilder.Register(&IntegrationPlatform{}, &IntegrationPlatformList{})
}
