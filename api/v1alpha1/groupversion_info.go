// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

// Package v1alpha1 holds the camel.apache.org/v1alpha1 API: the IntegrationOperator
// registry entry and KameletBinding, the older name of Pipe.
// +kubebuilder:object:generate=true
// +groupName=camel.apache.org
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "camel.apache.org", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds of this API with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the kinds of this API to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
