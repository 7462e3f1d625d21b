package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IntegrationProfileSpec is a named set of build settings and trait defaults that Camel K
// applies to the integrations that name it (annotation camel.apache.org/integration-profile.id).
type IntegrationProfileSpec struct {
	// Build configures how kits are built.
	Build IntegrationPlatformBuildSpec `json:"build,omitzero"`
	// Traits are trait defaults for the integrations of this profile.
	Traits Traits `json:"traits,omitempty"`
	// Dependencies are added to the integrations of this profile.
	Dependencies []string `json:"dependencies,omitempty"`
	// Kamelet configures where Kamelets come from.
	Kamelet IntegrationPlatformKameletSpec `json:"kamelet,omitzero"`
}

// IntegrationProfileStatus is what Camel K's operator observed about a profile, kept as written.
// +kubebuilder:pruning:PreserveUnknownFields
type IntegrationProfileStatus struct {
	CommonStatus `json:",inline"`
	// Phase summarises the status.
	Phase string `json:"phase,omitempty"`
}

// IntegrationProfile holds build settings and trait defaults for the integrations that name it.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=integrationprofiles,scope=Namespaced,shortName=ipr,categories=kamel;camel
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="The profile phase"
// +kubebuilder:printcolumn:name="Operator",type=string,JSONPath=`.metadata.annotations.camel\.apache\.org/operator\.id`,description="The operator the profile is assigned to"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type IntegrationProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the profile.
	Spec IntegrationProfileSpec `json:"spec,omitzero"`
	// Status is the observed profile.
	Status IntegrationProfileStatus `json:"status,omitzero"`
}

// IntegrationProfileList is a list of IntegrationProfiles.
// +kubebuilder:object:root=true
type IntegrationProfileList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the profiles.
	Items []IntegrationProfile `json:"items"`
}

func init() {
	SchemeBuilder.Register(&IntegrationProfile{}, &IntegrationProfileList{})
}
