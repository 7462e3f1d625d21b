// Package await waits for one object to reach a state by watching it, as kubectl wait does,
// rather than reading it again and again.
package await

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Check tells whether obj is in the state waited for and, when it is not, what the wait waits
// for. When there is no object to look at, obj is nil and err says why: the object's NotFound
// while it does not exist, or why it could not be listed. An error it returns ends the wait.
type Check[T client.Object] func(obj T, err error) (done bool, msg string, fail error)

// Object watches the object named key, of obj's kind, and calls check with each state it takes
// until check says it is done or fails, or ctx ends. It returns what check said last and
// whether it was done. An ended ctx is no error: the caller's timeout message says what it
// waited for, with the last message.
func Object[T client.Object](ctx context.Context, c client.WithWatch, key client.ObjectKey, obj T, check Check[T]) (string, bool, error) {
	var mu sync.Mutex
	var listErr error
	lw, err := newListWatch(c, key, obj, func(err error) {
		mu.Lock()
		defer mu.Unlock()
		listErr = err
	})
	if err != nil {
		return "", false, err
	}
	gvk, _ := apiutil.GVKForObject(obj, c.Scheme())
	resource, _ := meta.UnsafeGuessKindToResource(gvk)
	notFound := apierrors.NewNotFound(resource.GroupResource(), key.Name)
	var none T
	last, synced := "nothing has been read yet", false
	var failed error
	see := func(o T, err error) (bool, error) {
		done, msg, fail := check(o, err)
		last, failed = msg, fail
		return done, fail
	}
	_, err = watchtools.UntilWithSync(ctx, lw, obj, func(store cache.Store) (bool, error) {
		synced = true
		item, exists, err := store.GetByKey(storeKey(key))
		switch {
		case err != nil:
			return false, err
		case !exists:
			return see(none, notFound)
		}
		return see(item.(T), nil)
	}, func(ev watch.Event) (bool, error) {
		o, ok := ev.Object.(T)
		switch {
		case !ok || o.GetName() != key.Name || o.GetNamespace() != key.Namespace:
			return false, nil
		case ev.Type == watch.Deleted:
			return see(none, notFound)
		}
		return see(o, nil)
	})
	switch {
	case failed != nil:
		return last, false, failed
	case err == nil:
		return last, true, nil
	case ctx.Err() != nil:
		mu.Lock()
		defer mu.Unlock()
		if !synced && listErr != nil {
			_, last, _ = check(none, listErr)
		}
		return last, false, nil
	}
	return last, false, err
}

// storeKey is the key of the object named key in an informer's store.
func storeKey(key client.ObjectKey) string {
	if key.Namespace == "" {
		return key.Name
	}
	return key.Namespace + "/" + key.Name
}

// newListWatch lists and watches the object named key, of obj's kind, through c; listFailed
// hears each error a list returns, as an informer retries a failing list for ever.
func newListWatch(c client.WithWatch, key client.ObjectKey, obj client.Object, listFailed func(error)) (cache.ListerWatcher, error) {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return nil, err
	}
	newList, err := c.Scheme().New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err != nil {
		return nil, fmt.Errorf("watching %s %s: %w", gvk.Kind, key.Name, err)
	}
	list, ok := newList.(client.ObjectList)
	if !ok {
		return nil, fmt.Errorf("watching %s %s: %T is no list", gvk.Kind, key.Name, newList)
	}
	opts := func(raw metav1.ListOptions) []client.ListOption {
		return []client.ListOption{&client.ListOptions{Raw: &raw}, client.InNamespace(key.Namespace),
			client.MatchingFields{"metadata.name": key.Name}}
	}
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, raw metav1.ListOptions) (runtime.Object, error) {
			l := list.DeepCopyObject().(client.ObjectList)
			err := c.List(ctx, l, opts(raw)...)
			if err != nil {
				listFailed(err)
			}
			return l, err
		},
		WatchFuncWithContext: func(ctx context.Context, raw metav1.ListOptions) (watch.Interface, error) {
			return c.Watch(ctx, list.DeepCopyObject().(client.ObjectList), opts(raw)...)
		},
	}, c), nil
}
