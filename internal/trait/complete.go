package trait

import "strings"

// Complete completes a -t setting TRAIT.KEY=VALUE being typed: Camel K's trait names, then the
// properties of the named trait where the catalogue lists them. A value is not completed.
func Complete(typed string) []string {
	name, key, dotted := strings.Cut(typed, ".")
	if !dotted {
		var out []string
		for _, n := range camelKTraits {
			if strings.HasPrefix(n, name) {
				out = append(out, n+".")
			}
		}
		return out
	}
	if strings.Contains(key, "=") {
		return nil
	}
	props, ok := Properties(name)
	if !ok {
		return nil
	}
	var out []string
	for _, p := range props {
		if strings.HasPrefix(p, key) {
			out = append(out, name+"."+p+"=")
		}
	}
	return out
}
