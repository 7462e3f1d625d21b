// Package reassign moves Integrations, Pipes and KameletBindings between operators.
// It changes their camel.apache.org/operator.id annotation, as `caravan reassign` and the
// fleet controller's canaries do, and tells when a moved integration runs under its new
// operator.
package reassign

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
)

// Kind is a kind whose operator-id annotation users write.
type Kind struct {
	// Name is how output names the kind; Aliases are accepted for it too.
	Name    string
	Aliases []string
	GVK     schema.GroupVersionKind
}

// Kinds are the kinds that move, in the order they move. Integrations
// made from a binding do not move: they follow it.
var Kinds = []Kind{
	{Name: "integration", Aliases: []string{"integrations", "it"}, GVK: camelv1.GroupVersion.WithKind("Integration")},
	{Name: "pipe", Aliases: []string{"pipes", "pp"}, GVK: camelv1.GroupVersion.WithKind("Pipe")},
	{Name: "kameletbinding", Aliases: []string{"kameletbindings", "klb"}, GVK: camelv1alpha1.GroupVersion.WithKind("KameletBinding")},
}

// KindNamed is the kind of name or alias, case aside.
func KindNamed(name string) (Kind, bool) {
	for _, k := range Kinds {
		if strings.EqualFold(name, k.Name) || slices.Contains(k.Aliases, strings.ToLower(name)) {
			return k, true
		}
	}
	return Kind{}, false
}

// Target is one resource to move, as read.
type Target struct {
	Kind Kind
	Obj  *metav1.PartialObjectMetadata
}

// String names the target as "integration NAMESPACE/NAME".
func (t Target) String() string {
	return fmt.Sprintf("%s %s/%s", t.Kind.Name, t.Obj.Namespace, t.Obj.Name)
}

// Ref names the target as KIND/NAMESPACE/NAME, which ParseRef reads.
func (t Target) Ref() string {
	return t.Kind.Name + "/" + t.Obj.Namespace + "/" + t.Obj.Name
}

// Integration is the Integration that shows whether the target runs: the
// target itself, or the one a Pipe or KameletBinding is made into, which
// has its name.
func (t Target) Integration() types.NamespacedName {
	return types.NamespacedName{Namespace: t.Obj.Namespace, Name: t.Obj.Name}
}

// ParseRef reads a target named by Ref, without reading the resource.
func ParseRef(ref string) (Target, error) {
	kindName, rest, _ := strings.Cut(ref, "/")
	ns, name, ok := strings.Cut(rest, "/")
	kind, known := KindNamed(kindName)
	if !ok || !known || ns == "" || name == "" {
		return Target{}, fmt.Errorf("%q is not KIND/NAMESPACE/NAME of an integration, pipe or kameletbinding", ref)
	}
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	obj.SetGroupVersionKind(kind.GVK)
	return Target{Kind: kind, Obj: obj}, nil
}

// Selector selects what operator from has: its operator-id label, and
// the requirements of extra when given.
func Selector(from string, extra labels.Selector) labels.Selector {
	mine, _ := labels.NewRequirement(camelv1.OperatorIDLabel, selection.Equals, []string{from})
	sel := labels.NewSelector().Add(*mine)
	if extra != nil {
		reqs, _ := extra.Requirements()
		sel = sel.Add(reqs...)
	}
	return sel
}

// List lists, kind by kind, the resources of namespace ("" for all) that
// sel selects and whose annotation names operator from; integrations made
// from a binding follow it and are left out. A kind the API server does
// not serve has none.
func List(ctx context.Context, c client.Reader, namespace, from string, sel labels.Selector) ([]Target, error) {
	var targets []Target
	for _, kind := range Kinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(kind.GVK.GroupVersion().WithKind(kind.GVK.Kind + "List"))
		err := c.List(ctx, list, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel})
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("listing %ss of operator %s: %w", kind.Name, from, err)
		}
		for i := range list.Items {
			obj := &list.Items[i]
			if obj.Annotations[camelv1.OperatorIDAnnotation] != from || MadeFromBinding(kind, obj) != "" {
				continue
			}
			targets = append(targets, Target{Kind: kind, Obj: obj})
		}
	}
	return targets, nil
}

// Binding names the Pipe or KameletBinding that controls obj, as `Pipe
// "NAME"`, or "".
func Binding(obj metav1.Object) string {
	ref := metav1.GetControllerOf(obj)
	if ref == nil {
		return ""
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != camelv1.GroupVersion.Group || (ref.Kind != "Pipe" && ref.Kind != "KameletBinding") {
		return ""
	}
	return fmt.Sprintf("%s %q", ref.Kind, ref.Name)
}

// MadeFromBinding names the Pipe or KameletBinding that controls an
// integration, or "" for another kind or an integration of its own.
func MadeFromBinding(kind Kind, obj metav1.Object) string {
	if kind.Name != "integration" {
		return ""
	}
	return Binding(obj)
}

// Move moves the target to operator to: it patches the annotation, and
// only it, with the resourceVersion read as a precondition. On a conflict
// it reads the resource again and moves it only if it is still assigned
// to from ("" for whichever operator it has). It returns the id it moved
// the resource from. With client.DryRunAll among opts, admission runs and nothing changes.
func Move(ctx context.Context, c client.Client, t Target, from, to string, opts ...client.PatchOption) (string, error) {
	obj := t.Obj
	was := obj.Annotations[camelv1.OperatorIDAnnotation]
	first := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			was = obj.Annotations[camelv1.OperatorIDAnnotation]
			if from != "" && was != from {
				return &MovedError{To: was}
			}
		}
		first = false
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q},"resourceVersion":%q}}`,
			camelv1.OperatorIDAnnotation, to, obj.ResourceVersion)
		return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch)), opts...)
	})
	return was, err
}

// MovedError is Move's refusal of a resource that another writer moved
// away from the operator it was to move from.
type MovedError struct {
	// To is the id the resource was moved to ("" for none).
	To string
}

func (e *MovedError) Error() string {
	return fmt.Sprintf("it was moved to %s meanwhile: left alone", DisplayID(e.To))
}

// Settled tells whether integration it has settled under operator to: it
// is assigned to it, that operator owns it, and it is Running or in Error.
func Settled(it *camelv1.Integration, to string) bool {
	return it != nil && it.OperatorID() == to && it.Status.Ownership.Owner == to && settledPhase(it)
}

// SettledOutside tells whether integration it has settled under operator to, one that is not
// Caravan's and keeps no ownership record: it is assigned to to, the Caravan operator that owned
// it released it, and it is Running or in Error.
func SettledOutside(it *camelv1.Integration, to string) bool {
	if it == nil || it.OperatorID() != to {
		return false
	}
	o := it.Status.Ownership
	return (o.Owner == "" || o.Owner == to || o.ReleasedAt != nil) && settledPhase(it)
}

// settledPhase tells whether the integration's phase is one it settles in: Running or Error.
func settledPhase(it *camelv1.Integration) bool {
	return it.Status.Phase == camelv1.IntegrationPhaseRunning || it.Status.Phase == camelv1.IntegrationPhaseError
}

// DisplayID is id, or "<none>" for no id.
func DisplayID(id string) string {
	if id == "" {
		return "<none>"
	}
	return id
}
