package integrationcontroller

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestAWarningIsGivenOncePerGeneration(t *testing.T) {
	var w warnings
	key := types.NamespacedName{Namespace: "ns", Name: "it"}
	steps := []struct {
		what string
		gen  int64
		want bool
	}{
		{"TraitsIgnored", 1, true}, {"TraitsIgnored", 1, false}, {"DependenciesNotBuilt", 1, true},
		{"TraitsIgnored", 2, true}, {"TraitsIgnored", 2, false},
	}
	for i, s := range steps {
		if got := w.first(key, s.what, s.gen); got != s.want {
			t.Errorf("step %d (%s at %d): first = %v, want %v", i, s.what, s.gen, got, s.want)
		}
	}
	w.forget(key)
	if !w.first(key, "TraitsIgnored", 2) {
		t.Error("a forgotten integration's warning is not given again")
	}
}
