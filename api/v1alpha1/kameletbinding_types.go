// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// KameletBinding is the older name of Pipe: same spec, same status, same behaviour.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=kameletbindings,scope=Namespaced,shortName=klb,categories=kamel;camel
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="The KameletBinding phase"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="Whether the KameletBinding is ready"
// +kubebuilder:printcolumn:name="Operator",type=string,JSONPath=`.metadata.annotations.camel\.apache\.org/operator\.id`,description="The operator the KameletBinding is assigned to"
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.status.replicas`,description="The number of pods"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KameletBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired binding, as in Pipe.
	Spec camelv1.PipeSpec `json:"spec,omitzero"`
	// Status is the observed binding, as in Pipe.
	Status camelv1.PipeStatus `json:"status,omitzero"`
}

// OperatorID returns the id of the operator the binding is assigned to, or "".
func (in *KameletBinding) OperatorID() string {
	return in.Annotations[camelv1.OperatorIDAnnotation]
}

// KameletBindingList is a list of KameletBindings.
// +kubebuilder:object:root=true
type KameletBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the bindings.
	Items []KameletBinding `json:"items"`
}

func init() {
	SchemeBuilder.Register(&KameletBinding{}, &KameletBindingList{})
}
