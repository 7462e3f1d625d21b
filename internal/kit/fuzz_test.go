package kit

import (
	"testing"

	"github.com/caravan-dev/caravan/internal/fixture"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// FuzzAcceptedDependenciesLayOut: a dependency that runtime.ParseDependency accepts, as an
// integration lists it, can be written into a kit layer. It never panics.
func FuzzAcceptedDependenciesLayOut(f *testing.F) {
	seeds := []string{"camel:http", "camel-kafka", "mvn:org.example:lib:1.0", " x ", "a b", ""}
	// The dependencies the bench creates as bad input.
	for _, seed := range append(seeds, fixture.MalformedDependencies...) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, dep string) {
		if _, err := runtime.ParseDependency(dep); err != nil {
			return
		}
		spec := Spec{RuntimeVersion: "3.15.0", RuntimeProvider: "quarkus", Dependencies: NormalizeDependencies([]string{dep})}
		if _, err := Layer(spec); err != nil {
			t.Fatalf("dependency %q was accepted but its kit layer cannot be written: %v", dep, err)
		}
	})
}
