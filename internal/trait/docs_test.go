// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestTheTraitTableSaysWhatCaravanActsOn holds docs/traits.md to the code: one row per
// Camel K trait, "acted on" or "in part" exactly for the traits Caravan acts on.
func TestTheTraitTableSaysWhatCaravanActsOn(t *testing.T) {
	data, err := os.ReadFile("../../docs/traits.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for line := range strings.Lines(string(data)) {
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		name, status := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2])
		if name == "Trait" || strings.HasPrefix(name, "---") {
			continue
		}
		rows[name] = status
	}
	for _, name := range camelKTraits {
		status, ok := rows[name]
		switch {
		case !ok:
			t.Errorf("docs/traits.md has no row for the trait %s", name)
		case slices.Contains(Acted, name) != (status == "acted on" || status == "in part"):
			t.Errorf("docs/traits.md says the trait %s is %q; Acted is %v", name, status, Acted)
		}
	}
	if len(rows) != len(camelKTraits) {
		t.Errorf("docs/traits.md has %d rows, Camel K has %d traits", len(rows), len(camelKTraits))
	}
}
