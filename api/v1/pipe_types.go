// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PipeSpec binds a source to a sink through optional steps; it compiles to an Integration.
type PipeSpec struct {
	// Integration holds deprecated Camel K integration overrides.
	Integration *IntegrationSpec `json:"integration,omitempty"`
	// Source is where messages come from.
	Source Endpoint `json:"source,omitzero"`
	// Sink is where messages go.
	Sink Endpoint `json:"sink,omitzero"`
	// Steps run between the source and the sink, in order.
	Steps []Endpoint `json:"steps,omitempty"`
	// ErrorHandler is called when a message fails, in Camel K's format, kept as written.
	ErrorHandler *RawObject `json:"errorHandler,omitempty"`
	// Replicas is the number of pods to run.
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`
	// ServiceAccountName is the service account the pods run as.
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// Dependencies are extra Camel or Maven dependencies.
	Dependencies []string `json:"dependencies,omitempty"`
	// Traits configure the generated integration, by trait name.
	Traits Traits `json:"traits,omitempty"`
}

// Endpoint is a source, step or sink: a Kubernetes resource (often a Kamelet) or a Camel URI.
type Endpoint struct {
	// Ref points to a Kubernetes resource, such as a Kamelet.
	Ref *corev1.ObjectReference `json:"ref,omitempty"`
	// URI is a Camel endpoint URI.
	URI *string `json:"uri,omitempty"`
	// Properties are the endpoint properties, kept as written.
	Properties *RawObject `json:"properties,omitempty"`
	// Types are the deprecated Camel K event types by slot, kept as written.
	Types map[string]RawObject `json:"types,omitempty"`
	// DataTypes reference the data types by slot (in, out, error), kept as written.
	DataTypes map[string]DataTypeReference `json:"dataTypes,omitempty"`
}

// DataTypeReference names a data type by scheme and format.
type DataTypeReference struct {
	// Scheme is the data type's component scheme.
	Scheme string `json:"scheme,omitempty"`
	// Format is the data type's format name.
	Format string `json:"format,omitempty"`
}

// PipePhase is a label for where a Pipe is, computed from observed facts.
type PipePhase string

// Pipe phases.
const (
	PipePhaseNone     PipePhase = ""
	PipePhaseCreating PipePhase = "Creating"
	PipePhaseReady    PipePhase = "Ready"
	PipePhaseError    PipePhase = "Error"
)

// PipeStatus is what the operator observed about a Pipe.
type PipeStatus struct {
	CommonStatus `json:",inline"`
	// Phase summarises the status.
	Phase PipePhase `json:"phase,omitempty"`
	// Replicas is the number of pods observed.
	Replicas *int32 `json:"replicas,omitempty"`
	// Selector is the label selector of the pods, for the scale subresource.
	Selector string `json:"selector,omitempty"`
}

// Pipe binds a source to a sink through optional steps.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=pipes,scope=Namespaced,shortName=pp,categories=kamel;camel
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="The Pipe phase"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="Whether the Pipe is ready"
// +kubebuilder:printcolumn:name="Operator",type=string,JSONPath=`.metadata.annotations.camel\.apache\.org/operator\.id`,description="The operator the Pipe is assigned to"
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.status.replicas`,description="The number of pods"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Pipe struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired binding.
	Spec PipeSpec `json:"spec,omitzero"`
	// Status is the observed binding.
	Status PipeStatus `json:"status,omitzero"`
}

// OperatorID returns the id of the operator the Pipe is assigned to, or "".
func (in *Pipe) OperatorID() string { return operatorID(in) }

// PipeList is a list of Pipes.
// +kubebuilder:object:root=true
type PipeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Pipes.
	Items []Pipe `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Pipe{}, &PipeList{})
}
