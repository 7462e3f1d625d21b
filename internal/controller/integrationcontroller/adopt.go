package integrationcontroller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/kit"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// A moved integration keeps its pods when the new owner would build the same jars on the same
// base image as the kit its pods run: the new owner then makes a kit that wraps that kit's image
// instead of building another, so the Deployment's template does not change. The previous owner's
// kit qualifies, while the integration's Deployment is still the previous owner's, when it is
// Ready, is labelled with the hash of the same spec under the previous owner's id, and its image
// is the one the Deployment runs. The wrapping kit is named by the image (kit.Spec.AdoptedName):
// only integrations whose pods ran that image use it, and the new owner's other integrations of
// the same dependencies run a kit it builds itself.

// adoptedKit returns the kit the integration's status names when it is one of this operator's
// kits that wraps another operator's image for spec, or nil.
func (r *Reconciler) adoptedKit(ctx context.Context, s *scope, spec kit.Spec) (*camelv1.IntegrationKit, error) {
	ref := s.it.Status.IntegrationKit
	if ref == nil || ref.Name == spec.Name() {
		return nil, nil
	}
	k := &camelv1.IntegrationKit{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.it.Namespace, Name: ref.Name}, k); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if !k.DeletionTimestamp.IsZero() || k.Annotations[kit.AdoptedFromAnnotation] == "" ||
		!ownership.Owns(k.Annotations, r.OperatorID) || k.Labels[kit.SpecHashLabel] != spec.Hash() {
		return nil, nil
	}
	return k, nil
}

// runningKit returns the previous owner's kit whose image the integration's pods run when it was
// made for spec's content, or nil. It reads from the API server: neither object is in this
// operator's cache yet.
func (r *Reconciler) runningKit(ctx context.Context, s *scope, spec kit.Spec) (*camelv1.IntegrationKit, error) {
	prev := s.it.Status.Ownership.Previous
	if prev == "" || prev == r.OperatorID {
		return nil, nil
	}
	theirs := spec
	theirs.OperatorID = prev
	k := &camelv1.IntegrationKit{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: s.it.Namespace, Name: theirs.Name()}, k)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the kit of the previous owner %s: %w", prev, err)
	}
	if !k.DeletionTimestamp.IsZero() || k.Status.Phase != camelv1.IntegrationKitPhaseReady || k.Status.Image == "" ||
		k.Labels[kit.SpecHashLabel] != theirs.Hash() || !ownership.Owns(k.Annotations, prev) {
		return nil, nil
	}
	runs, err := r.podsRun(ctx, s, prev, k.Status.Image)
	if err != nil || !runs {
		return nil, err
	}
	return k, nil
}

// podsRun tells whether the integration's Deployment, as the previous owner prev left it, runs
// image in the integration's container. It reads from the API server: the Deployment is not in
// this operator's cache yet.
func (r *Reconciler) podsRun(ctx context.Context, s *scope, prev, image string) (bool, error) {
	d := &appsv1.Deployment{}
	err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(s.it), d)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the Deployment of the previous owner %s: %w", prev, err)
	}
	if !metav1.IsControlledBy(d, s.it) || d.Labels[camelv1.OperatorIDLabel] != prev {
		return false, nil
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == s.traits.Container.Name() && c.Image == image {
			return true, nil
		}
	}
	return false, nil
}

// A moved integration pinned to a kit (spec.integrationKit) keeps its pods too. The pinned kit
// stays another operator's, as the kit that caravan promote makes does; and several integrations,
// not all of them moved, may pin it. When the pinned kit is Ready and the pods run its image, the
// new owner makes a kit of its own that wraps that image, named after the pinned kit, and runs it.

// pinnedKit returns the key of the kit to run for the pinned kit key: key itself when it is this
// operator's; else this operator's kit that wraps key's image, made by an earlier reconcile; else,
// after a move, that kit made now (made is true) when key is another operator's Ready kit whose
// image the previous owner's pods run. Otherwise it returns key, for useKit to refuse.
func (r *Reconciler) pinnedKit(ctx context.Context, s *scope, key client.ObjectKey) (use client.ObjectKey, made bool, err error) {
	err = r.Client.Get(ctx, key, &camelv1.IntegrationKit{})
	if !apierrors.IsNotFound(err) {
		return key, false, err
	}
	if ref := s.it.Status.IntegrationKit; ref != nil && ref.Name != key.Name {
		w := &camelv1.IntegrationKit{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.it.Namespace, Name: ref.Name}, w)
		if err != nil && !apierrors.IsNotFound(err) {
			return key, false, err
		}
		if err == nil && w.DeletionTimestamp.IsZero() && w.Annotations[kit.AdoptedFromAnnotation] == key.Name &&
			ownership.Owns(w.Annotations, r.OperatorID) {
			return client.ObjectKeyFromObject(w), false, nil
		}
	}
	prev := s.it.Status.Ownership.Previous
	if prev == "" || prev == r.OperatorID || key.Namespace != s.it.Namespace {
		return key, false, nil
	}
	pinned := &camelv1.IntegrationKit{}
	err = r.APIReader.Get(ctx, key, pinned)
	if apierrors.IsNotFound(err) {
		return key, false, nil
	}
	if err != nil {
		return key, false, fmt.Errorf("reading the pinned kit %s: %w", key.Name, err)
	}
	img := pinned.Status.Image
	if !pinned.DeletionTimestamp.IsZero() || pinned.Status.Phase != camelv1.IntegrationKitPhaseReady || img == "" ||
		ownership.Owns(pinned.Annotations, r.OperatorID) {
		return key, false, nil
	}
	runs, err := r.podsRun(ctx, s, prev, img)
	if err != nil || !runs {
		return key, false, err
	}
	w := wrappingKit(pinned, r.OperatorID)
	if err := r.Client.Create(ctx, w); err != nil && !apierrors.IsAlreadyExists(err) {
		return key, false, fmt.Errorf("creating kit %s: %w", w.Name, err)
	}
	return client.ObjectKeyFromObject(w), true, nil
}

// wrappingKit is operator id's external kit of the image of pinned, another operator's kit,
// named by kit.WrappingName.
func wrappingKit(pinned *camelv1.IntegrationKit, id string) *camelv1.IntegrationKit {
	return &camelv1.IntegrationKit{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: pinned.Namespace, Name: kit.WrappingName(pinned.Name, pinned.Status.Image, id),
			Annotations: map[string]string{camelv1.OperatorIDAnnotation: id, kit.AdoptedFromAnnotation: pinned.Name},
			Labels: map[string]string{
				camelv1.OperatorIDLabel:         id,
				camelv1.IntegrationKitTypeLabel: camelv1.IntegrationKitTypeExternal,
			},
		},
		Spec: camelv1.IntegrationKitSpec{Image: pinned.Status.Image, Dependencies: pinned.Spec.Dependencies},
	}
}
