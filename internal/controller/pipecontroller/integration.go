package pipecontroller

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/internal/render"
)

// desiredIntegration is the Integration a binding generates, with the compiled spec. It has the
// binding's name and namespace, is controlled by the binding, and carries all of the binding's
// annotations (the operator id among them, so the Integration goes where the binding goes) and
// labels, plus the operator-id label and the created-by labels. It carries render.Hash of itself in
// render.AppliedHashAnnotation, so a reconcile can tell whether the applied Integration is current
// without applying it again. kubectl's last-applied-configuration is not copied: it describes the
// binding, and kubectl apply would read it as the Integration's.
//
// label is the operator-id label: the binding's operator, except during a move (see
// integrationLabel).
func desiredIntegration(k Kind, b client.Object, spec camelv1.IntegrationSpec, label string) *camelv1.Integration {
	annotations := maps.Clone(b.GetAnnotations())
	delete(annotations, corev1.LastAppliedConfigAnnotation)
	delete(annotations, render.AppliedHashAnnotation)
	labels := maps.Clone(b.GetLabels())
	if labels == nil {
		labels = map[string]string{}
	}
	labels[camelv1.OperatorIDLabel] = label
	labels[camelv1.CreatedByKindLabel] = k.GVK.Kind
	if len(validation.IsValidLabelValue(b.GetName())) == 0 {
		labels[camelv1.CreatedByNameLabel] = b.GetName()
	}
	it := &camelv1.Integration{
		TypeMeta: metav1.TypeMeta{APIVersion: camelv1.GroupVersion.String(), Kind: "Integration"},
		ObjectMeta: metav1.ObjectMeta{
			Name: b.GetName(), Namespace: b.GetNamespace(), Annotations: annotations, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: k.GVK.GroupVersion().String(), Kind: k.GVK.Kind, Name: b.GetName(), UID: b.GetUID(),
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: spec,
	}
	it.Annotations[render.AppliedHashAnnotation] = render.Hash(it)
	return it
}

// integrationLabel is the operator-id label of the generated Integration: the binding's operator,
// unless another holds it. While the Integration is still labelled for another operator, that
// operator hands the label over itself once it has released the Integration (docs/architecture.md,
// Handover), or the label mirror takes it when that operator is gone; until then the label stays as
// it is, and the binding's new operator only changes the assignment (the annotation), as a user
// moving the Integration would.
func integrationLabel(b client.Object, observed *camelv1.Integration) string {
	id := ownership.AssignedID(b.GetAnnotations())
	if observed != nil {
		if current := observed.Labels[camelv1.OperatorIDLabel]; current != "" && current != id {
			return current
		}
	}
	return id
}

// current reports whether the observed Integration is what the binding wants. It is when it carries
// the wanted hash (so its metadata and its spec were applied from this very desired state) and no
// one has changed a field of the spec the binding sets since (drift). Fields the binding does not
// set are left to others, as server-side apply leaves them: a trait someone adds is kept, a flow
// someone edits is put back.
func current(want, got *camelv1.Integration) bool {
	if got.Annotations[render.AppliedHashAnnotation] != want.Annotations[render.AppliedHashAnnotation] {
		return false
	}
	return covers(tree(want.Spec), tree(got.Spec))
}

// tree is v as decoded JSON (maps, slices, strings, float64s, booleans). Then the key order and
// spacing of raw trait and flow trees do not count as differences.
func tree(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil
	}
	return out
}

// covers reports whether got holds everything want sets, with the same values. Maps may have more
// keys; lists must be equal element by element (server-side apply replaces lists of these schemas
// whole).
func covers(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if gv, ok := g[k]; !ok || !covers(v, gv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		return ok && slices.EqualFunc(w, g, func(a, b any) bool { return reflect.DeepEqual(a, b) })
	default:
		return reflect.DeepEqual(want, got)
	}
}

// referencedKamelets are the names of the Kamelets a binding refers to:
// source, steps, sink and the error handler's sink. They index bindings,
// so that a change of a Kamelet reconciles the bindings that use it.
func referencedKamelets(spec *camelv1.PipeSpec) []string {
	endpoints := append([]camelv1.Endpoint{spec.Source, spec.Sink}, spec.Steps...)
	if spec.ErrorHandler != nil {
		var h struct {
			Sink *struct {
				Endpoint *camelv1.Endpoint `json:"endpoint"`
			} `json:"sink"`
		}
		if json.Unmarshal(spec.ErrorHandler.Raw, &h) == nil && h.Sink != nil && h.Sink.Endpoint != nil {
			endpoints = append(endpoints, *h.Sink.Endpoint)
		}
	}
	var names []string
	for _, e := range endpoints {
		if e.Ref != nil && e.Ref.Kind == "Kamelet" && e.Ref.Name != "" {
			names = append(names, e.Ref.Name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}
