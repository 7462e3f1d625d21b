package kit

import (
	"strconv"
	"strings"
	"testing"

	"github.com/caravan-dev/caravan/internal/fixture"
)

// FuzzValidateDependencies: a dependency that ValidateDependencies accepts, as an
// integration lists it, can be written into a kit layer; a refused one is named in the
// error. It never panics.
func FuzzValidateDependencies(f *testing.F) {
	seeds := []string{"camel:http", "camel-kafka", "mvn:org.example:lib:1.0", " x ", "a b", ""}
	// The dependencies the bench creates as bad input.
	for _, seed := range append(seeds, fixture.MalformedDependencies...) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, dep string) {
		if err := ValidateDependencies([]string{dep}); err != nil {
			if !strings.Contains(err.Error(), strconv.Quote(dep)) {
				t.Fatalf("the refusal of %q does not name it: %v", dep, err)
			}
			return
		}
		spec := Spec{RuntimeVersion: "3.15.0", RuntimeProvider: "quarkus", Dependencies: NormalizeDependencies([]string{dep})}
		if _, err := Layer(spec); err != nil {
			t.Fatalf("dependency %q was accepted but its kit layer cannot be written: %v", dep, err)
		}
	})
}
