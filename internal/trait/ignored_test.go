package trait

import (
	"slices"
	"testing"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

func TestTraitsCaravanDoesNotActOnAreToldApartFromUnknownOnes(t *testing.T) {
	traits := camelv1.Traits{"container": {}, "route": {}, "jolokia": {}, "promethues": {}, "mount": {}, "health": {}}
	camelK, unknown := Ignored(traits)
	if !slices.Equal(camelK, []string{"jolokia", "route"}) || !slices.Equal(unknown, []string{"promethues"}) {
		t.Fatalf("Ignored = %v, %v", camelK, unknown)
	}
	if camelK, unknown := Ignored(camelv1.Traits{"container": {}}); camelK != nil || unknown != nil {
		t.Fatalf("a trait Caravan acts on is ignored: %v, %v", camelK, unknown)
	}
}
