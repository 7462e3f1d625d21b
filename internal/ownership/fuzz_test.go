package ownership

import (
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzValidateID: an accepted operator id is a DNS-1123 label and a label value (it
// names objects and is the operator-id label); a refused one is named in the error.
// It never panics.
func FuzzValidateID(f *testing.F) {
	for _, seed := range []string{"camel-k", "tenant-a", "", "A", "-a", "a-", "a.b", strings.Repeat("a", 64), "ü", "a\n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, id string) {
		err := ValidateID(id)
		if err != nil {
			if id != "" && !strings.Contains(err.Error(), strconv.Quote(id)) {
				t.Fatalf("the refusal of %q does not name it: %v", id, err)
			}
			return
		}
		if errs := validation.IsDNS1123Label(id); len(errs) > 0 {
			t.Fatalf("%q accepted, but it is not a DNS-1123 label: %v", id, errs)
		}
		if errs := validation.IsValidLabelValue(id); len(errs) > 0 {
			t.Fatalf("%q accepted, but it is not a label value: %v", id, errs)
		}
	})
}
