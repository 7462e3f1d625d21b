package trait

import (
	"slices"
	"testing"
)

func TestCompleteOffersTraitNamesThenTheirProperties(t *testing.T) {
	for _, tc := range []struct {
		typed string
		want  []string
	}{
		{"contai", []string{"container."}},
		{"knative", []string{"knative.", "knative-service."}},
		{"nosuch", nil},
		{"container.limit", []string{"container.limitCPU=", "container.limitMemory="}},
		{"jvm.debugA", []string{"jvm.debugAddress="}},
		{"container.port=80", nil},
		{"knative.sink", nil},
	} {
		if got := Complete(tc.typed); !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.typed, got, tc.want)
		}
	}
	if got := Complete(""); len(got) != len(camelKTraits) {
		t.Errorf("nothing typed: got %d names, want every trait of Camel K's (%d)", len(got), len(camelKTraits))
	}
}
