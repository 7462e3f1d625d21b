// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

// Package render builds the children of a Running integration, following Camel K's runtime
// contract on camel-main. They are a ConfigMap with the sources, flows and properties, a
// Deployment that mounts it and runs the kit's jars with java, and a Service when the
// integration exposes a port. A sourceless integration (a pre-built image holding its
// routes) has no sources to mount and a ConfigMap only for its properties. Rendering is
// pure and deterministic: the same Input gives byte-identical JSON, ready for server-side
// apply.
package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/runtime"
	"github.com/caravan-dev/caravan/internal/trait"
)

// AppliedHashAnnotation holds Hash of a resource a reconciler applies, computed before the
// annotation is added, so that it can skip applying one that has not changed.
const AppliedHashAnnotation = "camel.apache.org/applied-hash"

// AppliedHashLabel is AppliedHashAnnotation on the children of an integration. The children
// carry what the operator stamps (its id, the hash) as labels: a change of a Deployment's
// annotations makes a new generation for its controller to observe, so a move, which changes
// them, would show the Deployment rolling out although its pods stay as they are.
const AppliedHashLabel = AppliedHashAnnotation

// Applied tells whether a Caravan reconciler applied obj: it carries the applied hash, as a label
// (an integration's children) or an annotation (a binding's Integration, and the children of
// earlier versions). An object controlled by a Caravan resource that carries neither was made by
// another operator (Camel K's).
func Applied(obj metav1.Object) bool {
	return obj.GetLabels()[AppliedHashLabel] != "" || obj.GetAnnotations()[AppliedHashAnnotation] != ""
}

// The keys of the ConfigMap of an integration's properties and flows.
const (
	PropertiesKey = "application.properties"
	FlowsKey      = "flows.yaml"
)

// Input is everything the children depend on.
type Input struct {
	// Integration is the integration to render; its name, namespace and uid name the children.
	Integration *camelv1.Integration
	// Traits are the parsed traits, platform defaults merged.
	Traits trait.Traits
	// OperatorID is the owner's id, copied to every child's label.
	OperatorID string
	// Image is the image to run (the kit image or container.image).
	Image string
	// Digest is the integration's status digest; it goes into the env CAMEL_K_DIGEST.
	Digest string
	// Provider is the runtime the kit holds; nil is runtime.Main.
	Provider runtime.Provider
	// Archive tells that the kit image holds a class-data-sharing archive of its classpath,
	// which the JVM starts from.
	Archive bool
	// RegistrySecret is the platform's registry Secret, which the pods pull with unless the
	// pull-secret trait says otherwise; "" for none.
	RegistrySecret string
	// Proxy are the operator's proxy variables (ProxyEnvVars), which the pods get unless the
	// environment trait's httpProxy is off.
	Proxy []corev1.EnvVar
	// MountedVersions are the resource versions of the stores mount.hotReload watches, as
	// "Kind/name=version" entries; the pod template carries them, so a change rolls the pods.
	MountedVersions []string
}

// MountedVersionsAnnotation, on an integration's pod template, lists the resource versions of the
// ConfigMaps and Secrets mount.hotReload watches: when one changes, the pods roll.
const MountedVersionsAnnotation = "caravan.dev/mounted-versions"

// ConfigMapName is the name of the ConfigMap holding an integration's sources.
func ConfigMapName(integration string) string { return integration + "-camel" }

// Selector is the pod selector of an integration's Deployment and Service. It holds the
// integration label only: selectors are immutable, and the Deployment is updated in place
// when the integration moves to another operator.
func Selector(integration string) map[string]string {
	return map[string]string{camelv1.IntegrationLabel: integration}
}

// Hash returns a short hash of the JSON of obj. obj must encode to JSON (Kubernetes
// objects always do); Hash panics otherwise.
func Hash(obj any) string {
	b, err := json.Marshal(obj)
	if err != nil {
		panic(fmt.Sprintf("render: hash of a value that does not encode to JSON: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// check refuses an Input the children cannot be rendered from.
func (in Input) check() error {
	if in.Integration == nil {
		return errors.New("render: no integration")
	}
	if in.Integration.Name == "" {
		return errors.New("render: the integration has no name")
	}
	if in.OperatorID == "" {
		return fmt.Errorf("render: integration %s: no operator id", in.Integration.Name)
	}
	return nil
}

// labels are the labels of every child. The pods carry only Selector: the
// operator that owns the integration is not part of what they run, so a
// move to another operator does not restart them.
func (in Input) labels() map[string]string {
	labels := in.Traits.Owner.Labels(in.Integration.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[camelv1.IntegrationLabel] = in.Integration.Name
	labels[camelv1.OperatorIDLabel] = in.OperatorID
	return labels
}

// objectMeta is the metadata of a child named name. It has labels (the operator id
// among them, and those the owner trait copies), the annotations the owner trait
// copies, and a controller reference to the integration.
func (in Input) objectMeta(name string) metav1.ObjectMeta {
	it := in.Integration
	return metav1.ObjectMeta{
		Name:        name,
		Namespace:   it.Namespace,
		Labels:      in.labels(),
		Annotations: in.Traits.Owner.Annotations(it.Annotations),
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion:         camelv1.GroupVersion.String(),
			Kind:               "Integration",
			Name:               it.Name,
			UID:                it.UID,
			Controller:         ptr(true),
			BlockOwnerDeletion: ptr(true),
		}},
	}
}

// hasConfigMap reports whether the integration has a ConfigMap: it has sources or flows
// (and the runtime's properties), or the camel trait's properties.
func (in Input) hasConfigMap() bool {
	return !Sourceless(in.Integration) || len(in.Traits.Camel.Properties()) > 0
}

// stampHash sets AppliedHashLabel on a rendered child, hashing it first.
func stampHash(obj metav1.Object) {
	h := Hash(obj)
	labels := maps.Clone(obj.GetLabels())
	if labels == nil {
		labels = map[string]string{}
	}
	labels[AppliedHashLabel] = h
	obj.SetLabels(labels)
}

func ptr[T any](v T) *T { return &v }
