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
	d := &appsv1.Deployment{}
	err = r.APIReader.Get(ctx, client.ObjectKeyFromObject(s.it), d)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the Deployment of the previous owner %s: %w", prev, err)
	}
	if !metav1.IsControlledBy(d, s.it) || d.Labels[camelv1.OperatorIDLabel] != prev {
		return nil, nil
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == s.traits.Container.Name() && c.Image == k.Status.Image {
			return k, nil
		}
	}
	return nil, nil
}
