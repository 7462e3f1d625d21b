// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package v1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RawObject is a JSON object kept exactly as written. Caravan stores it without
// knowing its keys, so trait, template and flow trees survive any round trip.
// +kubebuilder:validation:Type=object
// +kubebuilder:pruning:PreserveUnknownFields
type RawObject struct {
	apiextensionsv1.JSON `json:",inline"`
}

// Traits holds trait configurations by trait name ("container", "mount", "addons", ...),
// each kept as written: spec.traits.container.image reads as in Camel K.
type Traits map[string]RawObject

// Language is the Camel DSL a source is written in.
type Language string

// Languages known to Camel K. Other values are accepted and left to the runtime.
const (
	LanguageYAML       Language = "yaml"
	LanguageXML        Language = "xml"
	LanguageJava       Language = "java"
	LanguageJavaShell  Language = "jsh"
	LanguageGroovy     Language = "groovy"
	LanguageJavaScript Language = "js"
	LanguageKotlin     Language = "kts"
)

// SourceSpec is one source file of Camel routes.
type SourceSpec struct {
	// Name is the file name of the source.
	Name string `json:"name,omitempty"`
	// Path is where the file is stored.
	Path string `json:"path,omitempty"`
	// Content is the source code as plain text.
	Content string `json:"content,omitempty"`
	// RawContent is the source code as bytes.
	RawContent []byte `json:"rawContent,omitempty"`
	// ContentRef names a ConfigMap holding the source.
	ContentRef string `json:"contentRef,omitempty"`
	// ContentKey is the key of the source in the ContentRef ConfigMap.
	ContentKey string `json:"contentKey,omitempty"`
	// ContentType is the media type of the content.
	ContentType string `json:"contentType,omitempty"`
	// Compression tells whether the content is compressed and base64 encoded.
	Compression *bool `json:"compression,omitempty"`
	// Language is the Camel DSL of the source (yaml, xml, java, groovy, js, kts, jsh, ...).
	Language Language `json:"language,omitempty"`
	// Loader is the id of the runtime routes loader for this source.
	Loader string `json:"loader,omitempty"`
	// Interceptors are runtime loader interceptors (deprecated in Camel K).
	Interceptors []string `json:"interceptors,omitempty"`
	// Type is the kind of source, for example "template".
	Type string `json:"type,omitempty"`
	// PropertyNames lists the properties the source declares.
	PropertyNames []string `json:"property-names,omitempty"`
	// FromKamelet tells whether the source was generated from a Kamelet.
	FromKamelet *bool `json:"from-kamelet,omitempty"`
}

// ConfigurationSpec is a deprecated Camel K configuration entry (property, configmap, secret).
type ConfigurationSpec struct {
	// Type is the kind of configuration.
	Type string `json:"type"`
	// Value is the configuration value.
	Value string `json:"value"`
}

// Artifact is one file of a kit image.
type Artifact struct {
	// ID identifies the artifact.
	ID string `json:"id"`
	// Location is where the artifact comes from.
	Location string `json:"location,omitempty"`
	// Target is where the artifact lives in the image.
	Target string `json:"target,omitempty"`
	// Checksum is the digest of the artifact.
	Checksum string `json:"checksum,omitempty"`
}

// Failure records why a build failed and how recovery goes.
type Failure struct {
	// Reason says what went wrong.
	Reason string `json:"reason,omitempty"`
	// Time is when the failure happened.
	Time metav1.Time `json:"time,omitzero"`
	// Recovery tracks the retries.
	Recovery FailureRecovery `json:"recovery,omitzero"`
}

// FailureRecovery tracks retries after a failure.
type FailureRecovery struct {
	// Attempt is the number of attempts so far.
	Attempt int `json:"attempt,omitempty"`
	// AttemptMax is the number of attempts allowed.
	AttemptMax int `json:"attemptMax,omitempty"`
	// AttemptTime is when the last attempt started.
	AttemptTime metav1.Time `json:"attemptTime,omitzero"`
}

// CommonStatus holds the status fields every kind has.
type CommonStatus struct {
	// ObservedGeneration is the generation the status was computed from.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are the observations of the resource's state.
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// GetCondition returns the condition of the given type, or nil when it is absent.
func (in *CommonStatus) GetCondition(conditionType string) *metav1.Condition {
	return meta.FindStatusCondition(in.Conditions, conditionType)
}

// SetCondition adds or updates a condition; it reports whether anything changed.
func (in *CommonStatus) SetCondition(c metav1.Condition) bool {
	return meta.SetStatusCondition(&in.Conditions, c)
}

// operatorID reads the operator id annotation.
func operatorID(o metav1.Object) string {
	return o.GetAnnotations()[OperatorIDAnnotation]
}
