package measure

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/scheme"
)

// Watcher watches kinds in one namespace, so that the bench learns the
// moment each object changes instead of polling the API server (which
// would load the cluster it measures).
type Watcher struct {
	cache  cache.Cache
	kinds  []client.Object
	cancel context.CancelFunc
}

// NewWatcher starts watching kinds in namespace and returns once the
// watches have synced.
func NewWatcher(ctx context.Context, cfg *rest.Config, namespace string, kinds ...client.Object) (*Watcher, error) {
	c, err := cache.New(cfg, cache.Options{
		Scheme:            scheme.New(),
		DefaultNamespaces: map[string]cache.Config{namespace: {}},
		DefaultTransform:  cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{cache: c, kinds: kinds, cancel: cancel}
	for _, k := range kinds {
		if _, err := c.GetInformer(ctx, k); err != nil {
			cancel()
			return nil, err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("watching namespace %s: caches did not sync", namespace)
	}
	return w, nil
}

// Stop ends the watches.
func (w *Watcher) Stop() { w.cancel() }

// Tracker records, per name, the first moment check(name) held, checking
// at every add or update of a watched object named name (or whose
// integration label names it).
type Tracker struct {
	mu      sync.Mutex
	readyAt map[string]time.Time
	check   func(name string) bool
	onEvent func(obj client.Object)
	regs    []func()
	// Sweep, when set, lists from the API server the names that are done
	// when waiting makes no progress for 5 s. It is a safety net for a
	// moment that no event showed (it is then recorded when the sweep sees
	// it, late, and counted in missed).
	Sweep  func(ctx context.Context) ([]string, error)
	missed int
}

// Track starts recording the first moment check(name) holds for each
// name, calling onEvent (when set) with every added or updated object
// first.
func (w *Watcher) Track(ctx context.Context, check func(name string) bool, onEvent func(client.Object)) (*Tracker, error) {
	t := &Tracker{readyAt: map[string]time.Time{}, check: check, onEvent: onEvent}
	handle := func(o any) {
		obj, ok := o.(client.Object)
		if !ok {
			return
		}
		now := time.Now()
		if t.onEvent != nil {
			t.onEvent(obj)
		}
		name := obj.GetName()
		if it := obj.GetLabels()[camelv1.IntegrationLabel]; it != "" {
			name = it
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		if _, done := t.readyAt[name]; !done && t.check(name) {
			t.readyAt[name] = now
		}
	}
	for _, k := range w.kinds {
		inf, err := w.cache.GetInformer(ctx, k)
		if err != nil {
			return nil, err
		}
		reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { handle(o) },
			UpdateFunc: func(_, o any) { handle(o) },
		})
		if err != nil {
			return nil, err
		}
		t.regs = append(t.regs, func() { _ = inf.RemoveEventHandler(reg) })
	}
	return t, nil
}

// Stop ends the recording.
func (t *Tracker) Stop() {
	for _, r := range t.regs {
		r()
	}
}

func (t *Tracker) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.readyAt)
}

// Times are the recorded moments, by name.
func (t *Tracker) Times() map[string]time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]time.Time, len(t.readyAt))
	for k, v := range t.readyAt {
		out[k] = v
	}
	return out
}

// Wait returns when n names are done, or ctx ends, calling progress
// (when set) with the count every half second.
func (t *Tracker) Wait(ctx context.Context, n int, what string, progress func(done int)) error {
	last, changed := -1, time.Now()
	for {
		if time.Since(changed) > 5*time.Second {
			// No progress for a while: ask the API server, rather than
			// wait for an event that may not come.
			if err := t.sweepOnce(ctx); err != nil {
				return fmt.Errorf("waiting for %s: %w", what, err)
			}
		}
		done := t.count()
		if done != last {
			changed = time.Now()
		}
		if progress != nil {
			// Every time: the report prints a new count at most every
			// few seconds, so a count that stays is still shown.
			progress(done)
		}
		last = done
		if done >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %d of %d done: %w", what, done, n, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (t *Tracker) sweepOnce(ctx context.Context) error {
	if t.Sweep == nil {
		return nil
	}
	names, err := t.Sweep(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, name := range names {
		if _, done := t.readyAt[name]; !done {
			t.readyAt[name] = now
			t.missed++
		}
	}
	return nil
}

// WarnMissed says on w how many names the sweep found done before any
// event showed them: their times are late.
func (t *Tracker) WarnMissed(w io.Writer, what string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.missed > 0 {
		fmt.Fprintf(w, "warning: %s: no watch event showed %d of them done; the API server did, later (their times are late by up to 5.5 s)\n",
			what, t.missed)
	}
}

// ReadyIntegrations lists, from the API server, the integrations of
// namespace that are Ready.
func ReadyIntegrations(c client.Reader, namespace string) func(context.Context) ([]string, error) {
	return IntegrationsWith(c, namespace, camelv1.ConditionReady)
}

// IntegrationsWith lists, from the API server, the integrations of
// namespace whose condition of type condition is True.
func IntegrationsWith(c client.Reader, namespace, condition string) func(context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) {
		list := &camelv1.IntegrationList{}
		if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return nil, err
		}
		var names []string
		for _, it := range list.Items {
			if meta.IsStatusConditionTrue(it.Status.Conditions, condition) {
				names = append(names, it.Name)
			}
		}
		return names, nil
	}
}

// Last is the latest of the recorded moments.
func (t *Tracker) Last() time.Time {
	var last time.Time
	for _, at := range t.Times() {
		if at.After(last) {
			last = at
		}
	}
	return last
}

// IntegrationReady is the check of an Integration in the cache being
// Ready=True.
func (w *Watcher) IntegrationReady(namespace string) func(string) bool {
	return w.IntegrationWith(namespace, camelv1.ConditionReady)
}

// IntegrationWith is the check of an Integration in the cache having its
// condition of type condition True.
func (w *Watcher) IntegrationWith(namespace, condition string) func(string) bool {
	return func(name string) bool {
		it := &camelv1.Integration{}
		if err := w.cache.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, it); err != nil {
			return false
		}
		return meta.IsStatusConditionTrue(it.Status.Conditions, condition)
	}
}

// DeploymentReady is the check of a Deployment in the cache having all
// its replicas updated, ready and available.
func (w *Watcher) DeploymentReady(namespace string) func(string) bool {
	return func(name string) bool {
		d := &appsv1.Deployment{}
		if err := w.cache.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, d); err != nil {
			return false
		}
		return RolledOut(d)
	}
}

// RolledOut tells whether the Deployment's latest template runs on all
// its replicas, ready, with no old pod left.
func RolledOut(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	return st.ObservedGeneration >= d.Generation && st.UpdatedReplicas == want &&
		st.ReadyReplicas >= want && st.AvailableReplicas >= want && st.Replicas == want
}

// RunningUnder is the check that an integration is owned by id, Ready,
// and that its Deployment is id's and rolled out.
func (w *Watcher) RunningUnder(namespace, id string) func(string) bool {
	return func(name string) bool {
		key := client.ObjectKey{Namespace: namespace, Name: name}
		it := &camelv1.Integration{}
		if w.cache.Get(context.Background(), key, it) != nil {
			return false
		}
		if it.Status.Ownership.Owner != id || !meta.IsStatusConditionTrue(it.Status.Conditions, camelv1.ConditionReady) {
			return false
		}
		return w.deploymentUnder(key, id)
	}
}

// DeploymentUnder is the check that a Deployment is labelled for
// operator id and rolled out.
func (w *Watcher) DeploymentUnder(namespace, id string) func(string) bool {
	return func(name string) bool {
		return w.deploymentUnder(client.ObjectKey{Namespace: namespace, Name: name}, id)
	}
}

func (w *Watcher) deploymentUnder(key client.ObjectKey, id string) bool {
	d := &appsv1.Deployment{}
	if w.cache.Get(context.Background(), key, d) != nil {
		return false
	}
	return d.Labels[camelv1.OperatorIDLabel] == id && RolledOut(d)
}

// OwnedBy is the check that an integration's status names id as owner.
func (w *Watcher) OwnedBy(namespace, id string) func(string) bool {
	return func(name string) bool {
		it := &camelv1.Integration{}
		key := client.ObjectKey{Namespace: namespace, Name: name}
		return w.cache.Get(context.Background(), key, it) == nil && it.Status.Ownership.Owner == id
	}
}
