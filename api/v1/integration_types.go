// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IntegrationSpec is what the user wants to run: sources or flows, plus traits.
type IntegrationSpec struct {
	// Replicas is the number of pods to run.
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`
	// Sources are the files of Camel routes to run.
	Sources []SourceSpec `json:"sources,omitempty"`
	// Flows are routes in the YAML DSL, written inline.
	Flows []RawObject `json:"flows,omitempty"`
	// IntegrationKit pins the kit to run on.
	IntegrationKit *corev1.ObjectReference `json:"integrationKit,omitempty"`
	// Dependencies are extra Camel or Maven dependencies.
	Dependencies []string `json:"dependencies,omitempty"`
	// Profile is the Camel K trait profile.
	Profile string `json:"profile,omitempty"`
	// Traits configure how the integration is built and run, by trait name.
	Traits Traits `json:"traits,omitempty"`
	// Template customises the pod, in Camel K's pod template format.
	Template *RawObject `json:"template,omitempty"`
	// Configuration is deprecated Camel K configuration; use traits.
	Configuration []ConfigurationSpec `json:"configuration,omitempty"`
	// Repositories are extra Maven repositories of the kit's build, in Camel K's form:
	// URL[@id=ID][@name=NAME][@snapshots][@noreleases][@checksumpolicy=fail|warn|ignore].
	Repositories []string `json:"repositories,omitempty"`
	// ServiceAccountName is the service account the pods run as.
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// Git is Camel K's Git project configuration, kept as written.
	Git *RawObject `json:"git,omitempty"`
}

// IntegrationPhase is a label for where an Integration is, computed from observed facts.
type IntegrationPhase string

// Integration phases.
const (
	IntegrationPhaseNone           IntegrationPhase = ""
	IntegrationPhaseInitialization IntegrationPhase = "Initialization"
	IntegrationPhaseBuildingKit    IntegrationPhase = "Building Kit"
	IntegrationPhaseBuildComplete  IntegrationPhase = "Build Complete"
	IntegrationPhaseDeploying      IntegrationPhase = "Deploying"
	IntegrationPhaseUndeploying    IntegrationPhase = "Undeploying"
	IntegrationPhaseRunning        IntegrationPhase = "Running"
	IntegrationPhaseError          IntegrationPhase = "Error"
)

// KitReference names an IntegrationKit.
// Other keys of a reference, which Camel K's operator writes (kind, uid...), are kept.
// +kubebuilder:pruning:PreserveUnknownFields
type KitReference struct {
	// Namespace of the kit; empty means the integration's namespace.
	Namespace string `json:"namespace,omitempty"`
	// Name of the kit.
	Name string `json:"name"`
}

// Ownership records which operator owns an Integration, for handovers.
type Ownership struct {
	// Owner is the id of the operator that owns the integration.
	Owner string `json:"owner,omitempty"`
	// Epoch grows by one at each handover and never decreases.
	Epoch int64 `json:"epoch,omitempty"`
	// ReleasedAt is when Owner released the integration, if it did.
	ReleasedAt *metav1.Time `json:"releasedAt,omitempty"`
	// Previous is the id of the operator Owner adopted the integration
	// from, if any. A child still labelled with it is Owner's to take
	// over; one labelled with any other operator's id was taken from
	// Owner, and Owner restores it.
	Previous string `json:"previous,omitempty"`
	// Kept is set while Owner runs the workload that an operator other than Caravan's made, as
	// that operator made it: Owner took it over without changing its pods, and renders its own
	// once the integration's spec changes.
	Kept *KeptWorkload `json:"kept,omitempty"`
}

// KeptWorkload is a Deployment an operator other than Caravan's made, which the owner runs as it is.
type KeptWorkload struct {
	// From is the id of the operator that made it (its operator.id annotation); empty when it names none.
	From string `json:"from,omitempty"`
	// Generation is the integration's generation whose spec it runs, which the owner runs it for;
	// 0 when the spec changed since that operator deployed it, and the owner replaces it with its own.
	Generation int64 `json:"generation"`
	// Image is the image its pods run.
	Image string `json:"image,omitempty"`
	// Since is when the owner took it over.
	Since metav1.Time `json:"since"`
}

// IntegrationStatus is what the operator observed about an Integration.
type IntegrationStatus struct {
	CommonStatus `json:",inline"`
	// Phase summarises the status.
	Phase IntegrationPhase `json:"phase,omitempty"`
	// Digest is the hash of the spec parts that decide the kit and deployment.
	Digest string `json:"digest,omitempty"`
	// Image is the container image the pods run.
	Image string `json:"image,omitempty"`
	// IntegrationKit is the kit in use.
	IntegrationKit *KitReference `json:"integrationKit,omitempty"`
	// Platform is the IntegrationPlatform in use.
	Platform string `json:"platform,omitempty"`
	// Replicas is the number of pods observed.
	Replicas *int32 `json:"replicas,omitempty"`
	// Selector is the label selector of the pods, for the scale subresource.
	Selector string `json:"selector,omitempty"`
	// Ownership records the owning operator and handovers.
	Ownership Ownership `json:"ownership,omitzero"`
	// InitializationTimestamp is when the integration was last initialised.
	InitializationTimestamp *metav1.Time `json:"lastInitTimestamp,omitempty"`
	// CamelKIntegrationStatus holds what only Camel K's operator writes.
	CamelKIntegrationStatus `json:",inline"`
}

// Integration runs Camel routes: sources or flows plus traits become a Deployment.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=integrations,scope=Namespaced,shortName=it,categories=kamel;camel
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="The integration phase"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="Whether the integration is ready"
// +kubebuilder:printcolumn:name="Operator",type=string,JSONPath=`.metadata.annotations.camel\.apache\.org/operator\.id`,description="The operator the integration is assigned to"
// +kubebuilder:printcolumn:name="Kit",type=string,JSONPath=`.status.integrationKit.name`,description="The integration kit"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.status.image`,description="The image the integration runs",priority=1
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.status.replicas`,description="The number of pods",priority=1
// +kubebuilder:printcolumn:name="Owner",type=string,JSONPath=`.status.ownership.owner`,description="The operator that owns the integration now",priority=1
// +kubebuilder:printcolumn:name="Epoch",type=integer,JSONPath=`.status.ownership.epoch`,description="How many times an operator adopted the integration",priority=1
type Integration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired integration.
	Spec IntegrationSpec `json:"spec,omitzero"`
	// Status is the observed integration.
	Status IntegrationStatus `json:"status,omitzero"`
}

// OperatorID returns the id of the operator the integration is assigned to, or "".
func (in *Integration) OperatorID() string { return operatorID(in) }

// IntegrationList is a list of Integrations.
// +kubebuilder:object:root=true
type IntegrationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the integrations.
	Items []Integration `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Integration{}, &IntegrationList{})
}
