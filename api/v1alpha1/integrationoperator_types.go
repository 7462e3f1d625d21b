// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// ConditionConflict is True when another live operator already holds this id.
const ConditionConflict = "Conflict"

// ConditionMissingRights is True while the operator's identity lacks a right
// it needs in a namespace it serves; its message names them.
const ConditionMissingRights = "MissingRights"

// ConditionDeployed is True when the fleet controller has applied a declared
// operator's objects and its Deployment has rolled out; it is set only on
// declared operators (spec.namespace set).
const ConditionDeployed = "Deployed"

// ConditionCanary summarises spec.canary: True once every wave has moved,
// False while it moves or after a wave failed; the fleet controller sets it.
const ConditionCanary = "Canary"

// FleetAnnotation names, on a declared IntegrationOperator, the fleet
// controller that runs its operator. Its value is the namespace/name of the
// fleet controller's Deployment. The first fleet controller to reconcile the
// IntegrationOperator claims it, and others leave it.
const FleetAnnotation = "caravan.dev/fleet"

// WatchNamespacesFromAnnotation, set to WatchNamespacesFromOperator on a registration, lets the
// operator keep spec.watchNamespaces equal to its --watch-namespaces. The kustomize component
// watched-namespaces sets it, and the operator on a registration it creates.
const WatchNamespacesFromAnnotation = "caravan.dev/watch-namespaces-from"

// WatchNamespacesFromOperator: see WatchNamespacesFromAnnotation.
const WatchNamespacesFromOperator = "operator"

// IntegrationOperatorSpec is how the platform team configures one operator.
// With namespace set, the operator is declared: the fleet controller runs it
// from this spec, with the same objects as caravan install.
// +kubebuilder:validation:XValidation:rule="has(self.__namespace__) || !has(oldSelf.__namespace__)",message="spec.namespace cannot be removed once set: delete the IntegrationOperator to remove its operator"
type IntegrationOperatorSpec struct {
	// Default makes this operator adopt resources that name no operator. At most one is default.
	Default bool `json:"default,omitempty"`
	// WatchNamespaces limits the operator to these namespaces; empty means all. The operator
	// writes its own here when the registration carries WatchNamespacesFromAnnotation.
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	WatchNamespaces []string `json:"watchNamespaces,omitempty"`
	// Version is the operator version wanted, if any. For a declared
	// operator without an image, it is the tag of the fleet controller's
	// operator image to run.
	Version string `json:"version,omitempty"`

	// Namespace declares the operator: the fleet controller runs it in
	// this namespace. Empty for an operator installed by caravan install.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.namespace cannot change: declare the operator under another id in the new namespace, move its integrations, then delete this one"
	Namespace string `json:"namespace,omitempty"`
	// Image is the operator image of a declared operator; the fleet
	// controller's operator image (at spec.version, when set) by default.
	Image string `json:"image,omitempty"`
	// Replicas of a declared operator's Deployment (one leads); 1 by default.
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`
	// Resources of a declared operator's container; install's defaults when unset.
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// NodeSelector of a declared operator's pods.
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Tolerations of a declared operator's pods.
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// Admission installs the admission policies that enforce who may assign
	// resources to a declared operator, and bind it to its namespaces; true
	// by default.
	Admission *bool `json:"admission,omitempty"`
	// Canary moves another operator's integrations, Pipes and KameletBindings to this one in waves.
	// Each wave is gated on its integrations running here. The fleet controller runs it once this
	// declared operator has rolled out, and reports it in status.canary. A new canary starts when
	// this field changes.
	Canary *CanarySpec `json:"canary,omitempty"`
}

// CanarySpec is a move in waves from another operator to this one, as
// `caravan reassign --from FROM --to ID --waves ...` makes it.
type CanarySpec struct {
	// From is the id of the operator whose resources move.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	From string `json:"from"`
	// Waves are rising percentages ("10%", ending at "100%") or counts ("5")
	// of what From has when the canary starts, each reached at the end of
	// its wave. One wave of everything by default.
	Waves []string `json:"waves,omitempty"`
	// Selector narrows the move to the resources whose labels match it.
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// WaveTimeout is how long a wave waits for its integrations to run
	// under this operator before it fails; 5m by default.
	WaveTimeout *metav1.Duration `json:"waveTimeout,omitempty"`
	// Pause is how long the canary waits between waves.
	Pause *metav1.Duration `json:"pause,omitempty"`
	// RollbackOnFailure moves the resources of a failed wave back to From;
	// the canary stops after a failed wave either way.
	RollbackOnFailure bool `json:"rollbackOnFailure,omitempty"`
}

// CanaryPhase is where a canary stands.
type CanaryPhase string

// The phases of a canary. Succeeded, Failed and RolledBack are final
// until spec.canary changes.
const (
	CanaryPhaseProgressing CanaryPhase = "Progressing"
	CanaryPhaseRollingBack CanaryPhase = "RollingBack"
	CanaryPhaseSucceeded   CanaryPhase = "Succeeded"
	CanaryPhaseFailed      CanaryPhase = "Failed"
	CanaryPhaseRolledBack  CanaryPhase = "RolledBack"
)

// CanaryStatus is the progress of spec.canary.
type CanaryStatus struct {
	// ObservedGeneration is the generation whose spec.canary this is.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Spec is the spec.canary this is the progress of: when spec.canary
	// changes, a new canary starts.
	Spec  CanarySpec  `json:"spec"`
	Phase CanaryPhase `json:"phase,omitempty"`
	// Total is how many resources From had, of the selection, when the
	// canary started; Sizes are how many have moved at the end of each wave.
	Total int32   `json:"total,omitempty"`
	Sizes []int32 `json:"sizes,omitempty"`
	// Wave is the wave that runs, from 1, or the last one that ran.
	Wave int32 `json:"wave,omitempty"`
	// Moved is how many resources the finished waves moved.
	Moved int32 `json:"moved,omitempty"`
	// Current are the resources of the wave that runs, or that failed, as
	// KIND/NAMESPACE/NAME.
	Current []string `json:"current,omitempty"`
	// WaveStartTime is when the wave that runs started (or its rollback).
	WaveStartTime *metav1.Time `json:"waveStartTime,omitempty"`
	// NextWaveTime is when the next wave starts, after a pause.
	NextWaveTime *metav1.Time `json:"nextWaveTime,omitempty"`
	// Failure says why the wave failed, once one has: the rollback that
	// follows reports it with its own progress.
	Failure string `json:"failure,omitempty"`
	// Message says, in words, where the canary stands.
	Message string `json:"message,omitempty"`
}

// Declared reports whether the fleet controller runs this operator.
func (in *IntegrationOperator) Declared() bool { return in.Spec.Namespace != "" }

// IntegrationOperatorStatus is what the running operator reports about itself.
type IntegrationOperatorStatus struct {
	camelv1.CommonStatus `json:",inline"`
	// Namespace is where the operator registered from.
	Namespace string `json:"namespace,omitempty"`
	// Version is the version of the running operator.
	Version string `json:"version,omitempty"`
	// Leader is the identity of the replica holding the leader lease.
	Leader string `json:"leader,omitempty"`
	// HeartbeatTime is when the leader last renewed the registration.
	HeartbeatTime *metav1.Time `json:"heartbeatTime,omitempty"`
	// StaleAfterSeconds is how long the registration may go without a
	// heartbeat before it counts as gone (its integrations are orphans).
	StaleAfterSeconds int32 `json:"staleAfterSeconds,omitempty"`
	// Canary is the progress of spec.canary, which the fleet controller writes.
	Canary *CanaryStatus `json:"canary,omitempty"`
}

// IntegrationOperator is the registry entry of one operator; its name is the operator id.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=integrationoperators,scope=Cluster,shortName=iop,categories=kamel;camel
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 63",message="the IntegrationOperator name is the operator id and must be a DNS-1123 label: lowercase letters, digits and '-', at most 63 characters"
// +kubebuilder:printcolumn:name="Namespace",type=string,JSONPath=`.status.namespace`,description="The namespace the operator runs in"
// +kubebuilder:printcolumn:name="Default",type=boolean,JSONPath=`.spec.default`,description="Whether the operator adopts resources that name no operator"
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version`,description="The version of the running operator"
// +kubebuilder:printcolumn:name="Leader",type=string,JSONPath=`.status.leader`,description="The replica holding the leader lease"
// +kubebuilder:printcolumn:name="Heartbeat",type=date,JSONPath=`.status.heartbeatTime`,description="When the registration was last renewed"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="Whether the operator is ready"
// +kubebuilder:printcolumn:name="Canary",type=string,JSONPath=`.status.canary.phase`,description="Where the canary move to this operator stands",priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type IntegrationOperator struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the operator's configuration.
	Spec IntegrationOperatorSpec `json:"spec,omitzero"`
	// Status is the operator's registration.
	Status IntegrationOperatorStatus `json:"status,omitzero"`
}

// OperatorID returns the operator id, which is the object's name.
func (in *IntegrationOperator) OperatorID() string { return in.Name }

// IntegrationOperatorList is a list of IntegrationOperators.
// +kubebuilder:object:root=true
type IntegrationOperatorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the operators.
	Items []IntegrationOperator `json:"items"`
}

func init() {
	SchemeBuilder.Register(&IntegrationOperator{}, &IntegrationOperatorList{})
}
