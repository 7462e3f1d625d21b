package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CamelCatalogStatus is what Camel K's operator observed about a catalog, kept as written.
// +kubebuilder:pruning:PreserveUnknownFields
type CamelCatalogStatus struct {
	CommonStatus `json:",inline"`
	// Phase summarises the status.
	Phase string `json:"phase,omitempty"`
}

// CamelCatalog describes a Camel runtime for Camel K's operator: its artifacts and loaders.
// Caravan serves the kind so that Camel K's operator runs beside Caravan's; Caravan reads its
// own catalog (internal/catalog) and not these.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=camelcatalogs,scope=Namespaced,shortName=cc,categories=kamel;camel
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Runtime Version",type=string,JSONPath=`.spec.runtime.version`,description="The Camel runtime version"
// +kubebuilder:printcolumn:name="Runtime Provider",type=string,JSONPath=`.spec.runtime.provider`,description="The Camel runtime provider"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="The catalog phase"
// +kubebuilder:printcolumn:name="Operator",type=string,JSONPath=`.metadata.annotations.camel\.apache\.org/operator\.id`,description="The operator the catalog is assigned to"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type CamelCatalog struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the catalog, kept as written.
	Spec RawObject `json:"spec,omitzero"`
	// Status is the observed catalog.
	Status CamelCatalogStatus `json:"status,omitzero"`
}

// CamelCatalogList is a list of CamelCatalogs.
// +kubebuilder:object:root=true
type CamelCatalogList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the catalogs.
	Items []CamelCatalog `json:"items"`
}

func init() {
	SchemeBuilder.Register(&CamelCatalog{}, &CamelCatalogList{})
}
