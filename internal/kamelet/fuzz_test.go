package kamelet_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/caravan-dev/caravan/internal/kamelet"
)

// FuzzResolveProperties: a Kamelet property of any declared type and default, given any
// JSON value, resolves to a string or is refused with an error that names the Kamelet and
// the property. It never panics.
func FuzzResolveProperties(f *testing.F) {
	for _, seed := range [][3]string{
		{"string", `"x"`, `"hello"`}, {"integer", `1000`, `"{{period}}"`}, {"number", `"0.5"`, `1e400`},
		{"boolean", `false`, `"yes"`}, {"object", `{}`, `[1]`}, {"", `null`, `null`}, {"array", `[]`, `{"a":1}`},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, typ, def, value string) {
		k := parse(t, func(m map[string]any) {
			props := m["spec"].(map[string]any)["definition"].(map[string]any)["properties"].(map[string]any)
			p := map[string]any{"type": typ}
			var d any
			if json.Unmarshal([]byte(def), &d) == nil {
				p["default"] = d
			}
			props["fuzzed"] = p
		})
		var v any
		if err := json.Unmarshal([]byte(value), &v); err != nil {
			return
		}
		out, _, err := kamelet.ResolveProperties(k, map[string]any{"message": "m", "fuzzed": v})
		if err != nil {
			if !strings.Contains(err.Error(), "kamelet timer-source") || !strings.Contains(err.Error(), `"fuzzed"`) {
				t.Fatalf("type %q, default %s, value %s: the refusal does not name the Kamelet and the property: %v", typ, def, value, err)
			}
			return
		}
		if _, ok := out["fuzzed"]; !ok && v != nil {
			t.Fatalf("type %q, value %s: accepted, but the property has no value", typ, value)
		}
	})
}
