// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BuildSpec describes one build of a kit image.
type BuildSpec struct {
	// Tasks are the build steps in Camel K's format, kept as written.
	Tasks []RawObject `json:"tasks,omitempty"`
	// Timeout bounds the build's duration.
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// CamelKBuildSpec holds what only Camel K's operator writes.
	CamelKBuildSpec `json:",inline"`
}

// BuildPhase is a label for where a build is, computed from observed facts.
type BuildPhase string

// Build phases.
const (
	BuildPhaseNone       BuildPhase = ""
	BuildPhaseScheduling BuildPhase = "Scheduling"
	BuildPhasePending    BuildPhase = "Pending"
	BuildPhaseRunning    BuildPhase = "Running"
	BuildPhaseSucceeded  BuildPhase = "Succeeded"
	BuildPhaseFailed     BuildPhase = "Failed"
	BuildPhaseError      BuildPhase = "Error"
)

// BuildStatus is what the operator observed about a build.
type BuildStatus struct {
	CommonStatus `json:",inline"`
	// Phase summarises the status.
	Phase BuildPhase `json:"phase,omitempty"`
	// Image is the image built, by digest.
	Image string `json:"image,omitempty"`
	// Digest is the digest of the image built.
	Digest string `json:"digest,omitempty"`
	// BaseImage is the image the kit layer was added to.
	BaseImage string `json:"baseImage,omitempty"`
	// Artifacts are what the image's kit layers hold: the jars, with their
	// Maven coordinates and checksums.
	Artifacts []Artifact `json:"artifacts,omitempty"`
	// StartedAt is when the last attempt started.
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// Duration is how long the last attempt took, as a Go duration string.
	Duration string `json:"duration,omitempty"`
	// Failure records the last failure and the retries.
	Failure *Failure `json:"failure,omitempty"`
	// CamelKBuildStatus holds what only Camel K's operator writes.
	CamelKBuildStatus `json:",inline"`
}

// Build is one build of a kit image.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=builds,scope=Namespaced,shortName=ikb,categories=kamel;camel
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="The build phase"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="Whether the build succeeded"
// +kubebuilder:printcolumn:name="Attempts",type=integer,JSONPath=`.status.failure.recovery.attempt`,description="The number of attempts"
// +kubebuilder:printcolumn:name="Duration",type=string,JSONPath=`.status.duration`,description="How long the last attempt took"
// +kubebuilder:printcolumn:name="Operator",type=string,JSONPath=`.metadata.annotations.camel\.apache\.org/operator\.id`,description="The operator the build belongs to"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`,description="When the build was created"
// +kubebuilder:printcolumn:name="Started",type=date,JSONPath=`.status.startedAt`,description="When the last attempt started",priority=1
type Build struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired build.
	Spec BuildSpec `json:"spec,omitzero"`
	// Status is the observed build.
	Status BuildStatus `json:"status,omitzero"`
}

// OperatorID returns the id of the operator the build belongs to, or "".
func (in *Build) OperatorID() string { return operatorID(in) }

// BuildList is a list of Builds.
// +kubebuilder:object:root=true
type BuildList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the builds.
	Items []Build `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Build{}, &BuildList{})
}
