// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

// Package v1 holds the camel.apache.org/v1 API: the Camel K v1 resources that Caravan serves,
// so that existing Camel K manifests apply unchanged.
// +kubebuilder:object:generate=true
// +groupName=camel.apache.org
package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "camel.apache.org", Version: "v1"}

	// SchemeBuilder registers the kinds of this API with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the kinds of this API to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
