// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package integrationcontroller

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/trait"
)

// storeKinds are the kinds mount.hotReload watches, as metadata only. Secrets are not: the
// operator reads Secrets in its own namespace only (docs/security.md).
var storeKinds = []string{"ConfigMap"}

// StoresSelector selects the ConfigMaps mount.hotReload watches, as on Camel K: those a user
// labelled camel.apache.org/integration. The operator's own ConfigMaps carry its id and are left
// out.
func StoresSelector() labels.Selector {
	marked, _ := labels.NewRequirement(camelv1.IntegrationLabel, selection.Exists, nil)
	notOwn, _ := labels.NewRequirement(camelv1.OperatorIDLabel, selection.DoesNotExist, nil)
	return labels.NewSelector().Add(*marked, *notOwn)
}

// NewStoresCache is the cache of the metadata of the ConfigMaps StoresSelector selects, in the given
// namespaces (nil for all), for mount.hotReload.
func NewStoresCache(cfg *rest.Config, opts cache.Options, namespaces map[string]cache.Config) (cache.Cache, error) {
	opts.DefaultNamespaces = namespaces
	opts.DefaultLabelSelector = StoresSelector()
	opts.DefaultTransform = cache.TransformStripManagedFields()
	opts.ReaderFailOnMissingInformer = false
	return cache.New(cfg, opts)
}

// storeMetadata is an empty metadata object of a store kind.
func storeMetadata(kind string) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
	return m
}

// watchStores has a change of a watched store reconcile the integrations of its namespace that
// mount it; each reconcile decides, with the platform's traits, whether hot reload is on.
func (r *Reconciler) watchStores() []source.Source {
	var sources []source.Source
	for _, kind := range storeKinds {
		sources = append(sources, source.Kind[client.Object](r.Stores, storeMetadata(kind),
			handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, store client.Object) []reconcile.Request {
				return r.integrationsMounting(ctx, trait.Store{Kind: kind, Name: store.GetName()}, store.GetNamespace())
			})))
	}
	return sources
}

// integrationsMounting are the integrations of namespace whose own mount trait mounts store.
func (r *Reconciler) integrationsMounting(ctx context.Context, store trait.Store, namespace string) []reconcile.Request {
	list := &camelv1.IntegrationList{}
	if err := r.Client.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, it := range list.Items {
		traits, err := trait.Parse(camelv1.Traits{"mount": it.Spec.Traits["mount"]})
		if err != nil {
			continue
		}
		for _, st := range traits.Mount.Stores() {
			if st == store {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&it)})
				break
			}
		}
	}
	return reqs
}

// reconcileMountedVersions reads, with mount.hotReload on, the resource version of each mounted
// ConfigMap, for the pod template to carry: a change rolls the pods. A ConfigMap without the
// label camel.apache.org/integration is not watched, as on Camel K, nor is a Secret, which the
// operator may not read outside its namespace; a warning names them.
func (r *Reconciler) reconcileMountedVersions(ctx context.Context, s *scope) (reconcile.Result, error) {
	s.mountedVersions = nil
	if !s.traits.Mount.HotReload() {
		return reconcile.Result{}, nil
	}
	var unwatched, secrets []string
	for _, st := range s.traits.Mount.Stores() {
		if st.Kind == "Secret" {
			secrets = append(secrets, st.Name)
			continue
		}
		if r.Stores == nil {
			unwatched = append(unwatched, st.Name)
			continue
		}
		m := storeMetadata(st.Kind)
		err := r.Stores.Get(ctx, client.ObjectKey{Namespace: s.it.Namespace, Name: st.Name}, m)
		switch {
		case apierrors.IsNotFound(err):
			unwatched = append(unwatched, st.Name)
		case err != nil:
			return reconcile.Result{}, fmt.Errorf("reading the %s %s that mount.hotReload watches: %w", st.Kind, st.Name, err)
		default:
			s.mountedVersions = append(s.mountedVersions, st.Kind+"/"+st.Name+"="+m.ResourceVersion)
		}
	}
	if msg := unwatchedMessage(s.it.Name, unwatched, secrets); msg != "" &&
		r.warned.first(client.ObjectKeyFromObject(s.it), "HotReloadUnwatched", s.it.Generation) {
		controller.Event(r.Recorder, s.it, nil, corev1.EventTypeWarning, "HotReloadUnwatched", "Reconcile", msg)
	}
	return reconcile.Result{}, nil
}

// unwatchedMessage tells which mounted ConfigMaps and Secrets mount.hotReload does not watch, and
// what to do; "" when it watches them all.
func unwatchedMessage(integration string, configMaps, secrets []string) string {
	var parts []string
	if len(configMaps) > 0 {
		parts = append(parts, fmt.Sprintf("the ConfigMaps %s are missing or not labelled %s: label them, for instance %s=%s",
			strings.Join(configMaps, ", "), camelv1.IntegrationLabel, camelv1.IntegrationLabel, integration))
	}
	if len(secrets) > 0 {
		parts = append(parts, fmt.Sprintf("the Secrets %s are not watched, since the operator reads Secrets in its own namespace only: "+
			"after changing one, run kubectl rollout restart deployment/%s", strings.Join(secrets, ", "), integration))
	}
	if len(parts) == 0 {
		return ""
	}
	return "mount.hotReload restarts the pods when a mounted ConfigMap changes, and does not for these: " + strings.Join(parts, "; ")
}
