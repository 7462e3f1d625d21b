// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KameletSpec is a route template with a property schema.
type KameletSpec struct {
	// Definition is the JSON schema of the Kamelet's properties, kept as written.
	Definition *RawObject `json:"definition,omitempty"`
	// Sources are route sources in any Camel DSL.
	Sources []SourceSpec `json:"sources,omitempty"`
	// Template is the route template in the YAML DSL, kept as written.
	Template *RawObject `json:"template,omitempty"`
	// Types are the deprecated Camel K event types by slot (in, out, error), kept as written.
	Types map[string]RawObject `json:"types,omitempty"`
	// DataTypes are the data types by slot (in, out, error), kept as written.
	DataTypes map[string]RawObject `json:"dataTypes,omitempty"`
	// Dependencies are the Camel or Maven dependencies the Kamelet needs.
	Dependencies []string `json:"dependencies,omitempty"`
	// Versions are other versions of the Kamelet, by name, each a spec of its own: a route or a
	// Pipe endpoint picks one with kameletVersion, as on Camel K; the main one otherwise.
	Versions map[string]RawObject `json:"versions,omitempty"`
}

// KameletPhase is a label for where a Kamelet is, computed from observed facts.
type KameletPhase string

// Kamelet phases.
const (
	KameletPhaseNone  KameletPhase = ""
	KameletPhaseReady KameletPhase = "Ready"
	KameletPhaseError KameletPhase = "Error"
)

// KameletProperty is one property of a Kamelet and its default.
type KameletProperty struct {
	// Name of the property.
	Name string `json:"name,omitempty"`
	// Default value of the property, if any.
	Default string `json:"default,omitempty"`
}

// KameletStatus is what the operator observed about a Kamelet.
type KameletStatus struct {
	CommonStatus `json:",inline"`
	// Phase summarises the status.
	Phase KameletPhase `json:"phase,omitempty"`
	// Properties are the properties found in the definition.
	Properties []KameletProperty `json:"properties,omitempty"`
}

// Kamelet is a route template with a property schema.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=kamelets,scope=Namespaced,shortName=kl,categories=kamel;camel
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="The Kamelet phase"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="Whether the Kamelet is ready"
// +kubebuilder:printcolumn:name="Operator",type=string,JSONPath=`.metadata.annotations.camel\.apache\.org/operator\.id`,description="The operator the Kamelet is assigned to"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Kamelet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the Kamelet definition.
	Spec KameletSpec `json:"spec,omitzero"`
	// Status is the observed Kamelet.
	Status KameletStatus `json:"status,omitzero"`
}

// OperatorID returns the id of the operator the Kamelet is assigned to, or "".
func (in *Kamelet) OperatorID() string { return operatorID(in) }

// KameletList is a list of Kamelets.
// +kubebuilder:object:root=true
type KameletList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Kamelets.
	Items []Kamelet `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Kamelet{}, &KameletList{})
}
