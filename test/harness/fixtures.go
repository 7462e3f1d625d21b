package harness

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// TestImage is the image test integrations run; kwok never pulls it.
const TestImage = "example/camel-app:1.0"

// NewIntegration is a timer-to-log flow on TestImage, assigned to
// operatorID ("" leaves it unassigned).
func NewIntegration(ns, name, operatorID string, replicas int32) *camelv1.Integration {
	it := &camelv1.Integration{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: camelv1.IntegrationSpec{
			Replicas: ptr.To(replicas),
			Flows: []camelv1.RawObject{Raw(map[string]any{"from": map[string]any{
				"uri":   "timer:tick",
				"steps": []any{map[string]any{"to": "log:info"}},
			}})},
			Traits: camelv1.Traits{"container": Raw(map[string]any{"image": TestImage})},
		},
	}
	if operatorID != "" {
		it.Annotations = map[string]string{camelv1.OperatorIDAnnotation: operatorID}
	}
	return it
}

// Raw encodes v as a RawObject (a flow, a trait, a template).
func Raw(v any) camelv1.RawObject {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return camelv1.RawObject{JSON: apiextensionsv1.JSON{Raw: data}}
}

// PipeTimerToLog is a binding spec from the catalog: timer-source →
// log-sink, one replica of the test image (no kit to build).
func PipeTimerToLog() camelv1.PipeSpec {
	kamelet := func(name string, props map[string]any) camelv1.Endpoint {
		e := camelv1.Endpoint{Ref: &corev1.ObjectReference{APIVersion: "camel.apache.org/v1", Kind: "Kamelet", Name: name}}
		if props != nil {
			raw := Raw(props)
			e.Properties = &raw
		}
		return e
	}
	return camelv1.PipeSpec{
		Source:   kamelet("timer-source", map[string]any{"message": "hello"}),
		Sink:     kamelet("log-sink", nil),
		Replicas: ptr.To[int32](1),
		Traits:   camelv1.Traits{"container": Raw(map[string]any{"image": TestImage})},
	}
}

// NewPipe is a Pipe of PipeTimerToLog assigned to operatorID.
func NewPipe(ns, name, operatorID string) *camelv1.Pipe {
	return &camelv1.Pipe{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Annotations: map[string]string{camelv1.OperatorIDAnnotation: operatorID}},
		Spec: PipeTimerToLog(),
	}
}
