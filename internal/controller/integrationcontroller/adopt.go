package integrationcontroller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// A moved integration keeps its pods when the new owner would run the image they run: kit.Choose
// decides which kit an integration runs, and kitLookup reads what it asks for.

// kitLookup reads kits and the previous owner's Deployment for kit.Choose.
type kitLookup struct {
	ctx context.Context
	r   *Reconciler
	s   *scope
}

// Own reads this operator's kit from its cache, which holds only its share.
func (l kitLookup) Own(namespace, name string) (*camelv1.IntegrationKit, error) {
	k := &camelv1.IntegrationKit{}
	if err := l.r.Client.Get(l.ctx, client.ObjectKey{Namespace: namespace, Name: name}, k); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return k, nil
}

// Any reads a kit from the API server: another operator's kit is not in this operator's cache.
func (l kitLookup) Any(namespace, name string) (*camelv1.IntegrationKit, error) {
	k := &camelv1.IntegrationKit{}
	if err := l.r.APIReader.Get(l.ctx, client.ObjectKey{Namespace: namespace, Name: name}, k); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return k, nil
}

// Runs tells whether the integration's Deployment, as the previous owner left it, runs image in
// the integration's container. It reads from the API server: the Deployment is not in this
// operator's cache yet.
func (l kitLookup) Runs(image string) (bool, error) {
	prev := l.s.it.Status.Ownership.Previous
	d := &appsv1.Deployment{}
	err := l.r.APIReader.Get(l.ctx, client.ObjectKeyFromObject(l.s.it), d)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the Deployment of the previous owner %s: %w", prev, err)
	}
	if !metav1.IsControlledBy(d, l.s.it) || d.Labels[camelv1.OperatorIDLabel] != prev {
		return false, nil
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == l.s.traits.Container.Name() && c.Image == image {
			return true, nil
		}
	}
	return false, nil
}
