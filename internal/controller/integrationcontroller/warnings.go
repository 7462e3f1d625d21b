package integrationcontroller

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// warnings records the generation each warning of an integration was last given at, to give it once
// per generation. That holds even when the reconcile that first saw the generation stopped before
// the step that gives it (the status's observedGeneration moves on anyway).
type warnings struct {
	mu sync.Mutex
	m  map[types.NamespacedName]map[string]int64
}

// first reports whether warning what of integration key was not given
// at generation gen yet, and records it as given.
func (w *warnings) first(key types.NamespacedName, what string, gen int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[types.NamespacedName]map[string]int64{}
	}
	given := w.m[key]
	if given == nil {
		given = map[string]int64{}
		w.m[key] = given
	}
	if given[what] == gen {
		return false
	}
	given[what] = gen
	return true
}

// forget drops what was recorded for an integration that left this
// operator's cache.
func (w *warnings) forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, key)
}
