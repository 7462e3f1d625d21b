// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package kit

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// Request is what decides the kit an integration runs.
type Request struct {
	// OperatorID is the operator that chooses: the integration's owner.
	OperatorID string
	// Namespace is the integration's namespace, where its own kits are.
	Namespace string
	// Previous is the integration's previous owner (status.ownership.previous), or "".
	Previous string
	// Current names the kit the integration's status names, in Namespace, or "".
	Current string
	// PinnedNamespace and PinnedName name the kit of spec.integrationKit, or "" when it names none.
	PinnedNamespace, PinnedName string
	// Spec is the kit of the integration's dependencies, with OperatorID set; unused when pinned.
	Spec Spec
}

// Lookup reads what the choice needs, only when it needs it.
type Lookup interface {
	// Own returns this operator's kit of that name, from its cache, or nil when it has none.
	Own(namespace, name string) (*camelv1.IntegrationKit, error)
	// Any returns the kit of that name whoever owns it, from the API server, or nil.
	Any(namespace, name string) (*camelv1.IntegrationKit, error)
	// Runs tells whether the Deployment the previous owner left runs image for the integration.
	Runs(image string) (bool, error)
}

// Choice is the kit an integration runs: one that exists, one to make first, or a pinned kit
// that is not this operator's.
type Choice struct {
	// Namespace and Name name the kit.
	Namespace, Name string
	// Kit is the kit when it exists and is this operator's.
	Kit *camelv1.IntegrationKit
	// Make, when Kit is nil, is the kit to create: the integration's own, which is built, or
	// one that wraps the image of another operator's kit that the pods run. Nil for a pinned
	// kit that is not this operator's, which is never made.
	Make *camelv1.IntegrationKit
	// Why says what is being made, for the integration's condition while it is.
	Why string
}

// Choose returns the kit an integration runs. A pinned kit is run when it is this operator's;
// after a move, a kit that wraps its image when the previous owner's pods run it. Otherwise the
// integration runs the kit of its dependencies, which wraps the previous owner's kit of the same
// spec while the pods run that kit's image, and is built when there is none.
func Choose(r Request, l Lookup) (Choice, error) {
	if r.PinnedName != "" {
		return choosePinned(r, l)
	}
	return chooseOwn(r, l)
}

// choosePinned picks the kit of spec.integrationKit: the pinned kit itself when it is this
// operator's, else a wrapping kit of this operator, made earlier or now.
func choosePinned(r Request, l Lookup) (Choice, error) {
	pinned := Choice{Namespace: r.PinnedNamespace, Name: r.PinnedName}
	k, err := l.Own(r.PinnedNamespace, r.PinnedName)
	if err != nil || k != nil {
		pinned.Kit = k
		return pinned, err
	}
	if w, err := currentWrapper(r, l, func(w *camelv1.IntegrationKit) bool {
		return w.Annotations[AdoptedFromAnnotation] == r.PinnedName
	}); w != nil || err != nil {
		return Choice{Namespace: r.Namespace, Name: r.Current, Kit: w}, err
	}
	if !r.moved() || r.PinnedNamespace != r.Namespace {
		return pinned, nil
	}
	theirs, err := l.Any(r.PinnedNamespace, r.PinnedName)
	if err != nil {
		return pinned, fmt.Errorf("reading the pinned kit %s: %w", r.PinnedName, err)
	}
	if !ready(theirs) || ownership.Owns(theirs.Annotations, r.OperatorID) {
		return pinned, nil
	}
	if runs, err := l.Runs(theirs.Status.Image); err != nil || !runs {
		return pinned, err
	}
	w := wrapper(theirs, WrappingName(theirs.Name, theirs.Status.Image, r.OperatorID), r.OperatorID)
	w.Spec.Dependencies = theirs.Spec.Dependencies
	return Choice{Namespace: r.Namespace, Name: w.Name, Make: w, Why: fmt.Sprintf(
		"making the kit %s of the image the pods run, which the pinned kit %s holds", w.Name, theirs.Name)}, nil
}

// chooseOwn picks the kit of the integration's dependencies: a wrapping kit it runs already,
// this operator's kit of its spec, else one to make.
func chooseOwn(r Request, l Lookup) (Choice, error) {
	name := r.Spec.Name()
	if r.Current != name {
		if w, err := currentWrapper(r, l, func(w *camelv1.IntegrationKit) bool {
			return w.Annotations[AdoptedFromAnnotation] != "" && w.Labels[SpecHashLabel] == r.Spec.Hash()
		}); w != nil || err != nil {
			return Choice{Namespace: r.Namespace, Name: r.Current, Kit: w}, err
		}
	}
	own := Choice{Namespace: r.Namespace, Name: name}
	k, err := l.Own(r.Namespace, name)
	if err != nil || k != nil {
		own.Kit = k
		return own, err
	}
	theirs, err := previousKit(r, l)
	if err != nil {
		return own, err
	}
	if theirs == nil {
		own.Why = fmt.Sprintf("building the kit %s for this integration's dependencies", name)
		own.Make, err = r.Spec.resource(r.OperatorID, r.Namespace, name)
		return own, err
	}
	// The wrapping kit records this operator's spec, and its hash, beside the image.
	w := wrapper(theirs, r.Spec.AdoptedName(theirs.Status.Image), r.OperatorID)
	if w.Spec, err = ToResource(r.Spec); err != nil {
		return own, err
	}
	w.Spec.Image = theirs.Status.Image
	w.Labels[SpecHashLabel] = r.Spec.Hash()
	return Choice{Namespace: r.Namespace, Name: w.Name, Make: w, Why: fmt.Sprintf(
		"making the kit %s of the image the pods run, which kit %s of operator %s holds for the same dependencies",
		w.Name, theirs.Name, r.Previous)}, nil
}

// currentWrapper returns the kit the integration's status names when it is a live kit of this
// operator that wraps another's image and fits, or nil.
func currentWrapper(r Request, l Lookup, fits func(*camelv1.IntegrationKit) bool) (*camelv1.IntegrationKit, error) {
	if r.Current == "" || r.Current == r.PinnedName {
		return nil, nil
	}
	w, err := l.Own(r.Namespace, r.Current)
	if err != nil || w == nil || !w.DeletionTimestamp.IsZero() || !ownership.Owns(w.Annotations, r.OperatorID) || !fits(w) {
		return nil, err
	}
	return w, nil
}

// previousKit returns the previous owner's Ready kit of the same spec when the pods it left run
// its image, or nil.
func previousKit(r Request, l Lookup) (*camelv1.IntegrationKit, error) {
	if !r.moved() {
		return nil, nil
	}
	spec := r.Spec
	spec.OperatorID = r.Previous
	k, err := l.Any(r.Namespace, spec.Name())
	if err != nil {
		return nil, fmt.Errorf("reading the kit of the previous owner %s: %w", r.Previous, err)
	}
	if !ready(k) || k.Labels[SpecHashLabel] != spec.Hash() || !ownership.Owns(k.Annotations, r.Previous) {
		return nil, nil
	}
	if runs, err := l.Runs(k.Status.Image); err != nil || !runs {
		return nil, err
	}
	return k, nil
}

// moved tells whether the integration came from another operator.
func (r Request) moved() bool { return r.Previous != "" && r.Previous != r.OperatorID }

// ready tells whether k is a live Ready kit with an image.
func ready(k *camelv1.IntegrationKit) bool {
	return k != nil && k.DeletionTimestamp.IsZero() && k.Status.Phase == camelv1.IntegrationKitPhaseReady && k.Status.Image != ""
}

// Resource is the kit of s, named s.Name(), for operator s.OperatorID to build in namespace.
func (s Spec) Resource(namespace string) (*camelv1.IntegrationKit, error) {
	return s.resource(s.OperatorID, namespace, s.Name())
}

// resource is operator id's kit of s named name, which is built unless it is made external.
func (s Spec) resource(id, namespace, name string) (*camelv1.IntegrationKit, error) {
	spec, err := ToResource(s)
	if err != nil {
		return nil, err
	}
	return &camelv1.IntegrationKit{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: name,
			Annotations: map[string]string{camelv1.OperatorIDAnnotation: id},
			Labels: map[string]string{
				camelv1.OperatorIDLabel:         id,
				camelv1.IntegrationKitTypeLabel: camelv1.IntegrationKitTypePlatform,
				SpecHashLabel:                   s.Hash(),
			},
		},
		Spec: spec,
	}, nil
}

// wrapper is operator id's external kit named name of the image of k, another operator's kit.
func wrapper(k *camelv1.IntegrationKit, name, id string) *camelv1.IntegrationKit {
	w := &camelv1.IntegrationKit{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: k.Namespace, Name: name,
			Annotations: map[string]string{camelv1.OperatorIDAnnotation: id, AdoptedFromAnnotation: k.Name},
			Labels: map[string]string{
				camelv1.OperatorIDLabel:         id,
				camelv1.IntegrationKitTypeLabel: camelv1.IntegrationKitTypeExternal,
			},
		},
		Spec: camelv1.IntegrationKitSpec{Image: k.Status.Image},
	}
	if HasArchive(k) {
		// The same pods run on: the same archive, the same command line.
		w.Annotations[ArchivedAnnotation] = "true"
	}
	if t, ok := k.Spec.Traits["camel"]; ok && k.Labels[SpecHashLabel] != "" {
		// A kit Caravan built records its runtime provider, whose command line the pods run.
		w.Spec.Traits = camelv1.Traits{"camel": t}
	}
	return w
}
