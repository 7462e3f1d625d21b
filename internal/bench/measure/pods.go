package measure

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// PodWatch keeps the fewest ready, not terminating, pods any integration
// had, from the pod events of a Watcher that watches Pods, and the pods
// that were not there when it started.
type PodWatch struct {
	w         *Watcher
	namespace string
	mu        sync.Mutex
	min       int32
	seen      bool
	before    map[types.UID]bool
	new       map[types.UID]bool
}

// NewPodWatch starts keeping the pods of namespace that w shows; Observe
// is the onEvent of a Track of w that feeds it.
func NewPodWatch(ctx context.Context, w *Watcher, namespace string) (*PodWatch, error) {
	p := &PodWatch{w: w, namespace: namespace, min: 1 << 30, before: map[types.UID]bool{}, new: map[types.UID]bool{}}
	list := &corev1.PodList{}
	if err := w.cache.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	for i := range list.Items {
		p.before[list.Items[i].UID] = true
	}
	return p, nil
}

// Observe notes a pod that was added or updated, and the ready pods of
// its integration.
func (p *PodWatch) Observe(obj client.Object) {
	if _, ok := obj.(*corev1.Pod); !ok {
		return
	}
	p.mu.Lock()
	if !p.before[obj.GetUID()] {
		p.new[obj.GetUID()] = true
	}
	p.mu.Unlock()
	name := obj.GetLabels()[camelv1.IntegrationLabel]
	if name == "" {
		return
	}
	list := &corev1.PodList{}
	if p.w.cache.List(context.Background(), list, client.InNamespace(p.namespace),
		client.MatchingLabels{camelv1.IntegrationLabel: name}) != nil {
		return
	}
	var ready int32
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp == nil && podReady(&list.Items[i]) {
			ready++
		}
	}
	p.mu.Lock()
	p.min, p.seen = min(p.min, ready), true
	p.mu.Unlock()
}

// Started is how many pods were created since NewPodWatch.
func (p *PodWatch) Started() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.new)
}

// Minimum is the fewest ready pods an integration had, or 1<<30 when no
// pod event came.
func (p *PodWatch) Minimum() int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.seen {
		return 1 << 30
	}
	return p.min
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
