// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IntegrationKitSpec describes the image an integration runs on.
type IntegrationKitSpec struct {
	// Image is a pre-built image; when set, nothing is built.
	Image string `json:"image,omitempty"`
	// Dependencies are the Camel or Maven dependencies in the kit.
	Dependencies []string `json:"dependencies,omitempty"`
	// Configuration is deprecated Camel K configuration; use traits.
	Configuration []ConfigurationSpec `json:"configuration,omitempty"`
	// Traits are the build-time traits of the kit, by trait name.
	Traits Traits `json:"traits,omitempty"`
	// Profile is the trait profile the kit was made for.
	Profile string `json:"profile,omitempty"`
	// Repositories are extra Maven repositories of the kit's build, in Camel K's form:
	// URL[@id=ID][@name=NAME][@snapshots][@noreleases][@checksumpolicy=fail|warn|ignore].
	Repositories []string `json:"repositories,omitempty"`
	// Sources are sources added at build time.
	Sources []SourceSpec `json:"sources,omitempty"`
	// Capabilities are Camel K's capabilities of the kit; Caravan does not read them.
	Capabilities []string `json:"capabilities,omitempty"`
}

// IntegrationKitPhase is a label for where a kit is, computed from observed facts.
type IntegrationKitPhase string

// IntegrationKit phases.
const (
	IntegrationKitPhaseNone           IntegrationKitPhase = ""
	IntegrationKitPhaseBuildSubmitted IntegrationKitPhase = "Build Submitted"
	IntegrationKitPhaseBuildRunning   IntegrationKitPhase = "Build Running"
	IntegrationKitPhaseReady          IntegrationKitPhase = "Ready"
	IntegrationKitPhaseError          IntegrationKitPhase = "Error"
)

// IntegrationKitStatus is what the operator observed about a kit.
type IntegrationKitStatus struct {
	CommonStatus `json:",inline"`
	// Phase summarises the status.
	Phase IntegrationKitPhase `json:"phase,omitempty"`
	// BaseImage is the image the kit layer was added to.
	BaseImage string `json:"baseImage,omitempty"`
	// Image is the kit image, by digest once built.
	Image string `json:"image,omitempty"`
	// Digest is the digest of the kit image.
	Digest string `json:"digest,omitempty"`
	// Artifacts are the files in the kit layer.
	Artifacts []Artifact `json:"artifacts,omitempty"`
	// Failure records the last build failure.
	Failure *Failure `json:"failure,omitempty"`
	// CamelKKitStatus holds what only Camel K's operator writes.
	CamelKKitStatus `json:",inline"`
}

// IntegrationKit is the image an integration runs on: built by the operator, or external.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=integrationkits,scope=Namespaced,shortName=ik,categories=kamel;camel
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="The integration kit phase"
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.metadata.labels.camel\.apache\.org/kit\.type`,description="The integration kit type"
// +kubebuilder:printcolumn:name="Provider",type=string,JSONPath=`.spec.traits.camel.runtimeProvider`,description="The runtime the kit holds: main (camel-main) or quarkus (Camel Quarkus)"
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.status.image`,description="The integration kit image"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="Whether the kit is ready"
// +kubebuilder:printcolumn:name="Operator",type=string,JSONPath=`.metadata.annotations.camel\.apache\.org/operator\.id`,description="The operator the kit belongs to"
// +kubebuilder:printcolumn:name="Archive",type=string,JSONPath=`.status.conditions[?(@.type=="ClassDataArchive")].status`,description="Whether the kit image holds a class-data-sharing archive its integrations start from",priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type IntegrationKit struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired kit.
	Spec IntegrationKitSpec `json:"spec,omitzero"`
	// Status is the observed kit.
	Status IntegrationKitStatus `json:"status,omitzero"`
}

// OperatorID returns the id of the operator the kit belongs to, or "".
func (in *IntegrationKit) OperatorID() string { return operatorID(in) }

// IntegrationKitList is a list of IntegrationKits.
// +kubebuilder:object:root=true
type IntegrationKitList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the kits.
	Items []IntegrationKit `json:"items"`
}

func init() {
	SchemeBuilder.Register(&IntegrationKit{}, &IntegrationKitList{})
}
