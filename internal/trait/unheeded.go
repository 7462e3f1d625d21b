// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// inertProperties are the Camel K properties of traits Caravan acts on that take no effect
// here: they are read as valid and kept as written.
var inertProperties = map[string][]string{
	"builder": {"annotations", "baseImage", "incrementalImageBuild", "nodeSelector",
		"orderStrategy", "platforms", "strategy", "tasks", "tasksFilter", "verbose"},
	"cron": {"components"},
	"container": {"allowPrivilegeEscalation", "auto", "capabilitiesAdd", "capabilitiesDrop", "expose",
		"runAsNonRoot", "runAsUser", "seccompProfileType"},
	"jvm":         {"agents", "jar", "printCommand"},
	"kamelets":    {"mountPoint"},
	"mount":       {"scanKameletsImplicitLabelSecrets"},
	"pull-secret": {"imagePullerDelegation"},
}

// Unheeded is what a trait tree sets that takes no effect on Caravan, each list sorted.
type Unheeded struct {
	// CamelK are Camel K traits Caravan keeps and does not act on.
	CamelK []string
	// Unknown are names of no Camel K trait: typos, or another project's.
	Unknown []string
	// UnknownProperties are TRAIT.PROPERTY that Camel K's trait does not have.
	UnknownProperties []string
	// Inert are TRAIT.PROPERTY of traits Caravan acts on that it keeps and does not apply.
	Inert []string
	// Quarkus are the quarkus.* keys of camel.properties, which the camel-main runtime does not read.
	Quarkus []string
}

// Check finds what t sets that takes no effect.
func Check(t camelv1.Traits) Unheeded {
	var u Unheeded
	u.CamelK, u.Unknown = Ignored(t)
	u.UnknownProperties = UnknownProperties(t)
	for name, raw := range t {
		var props map[string]json.RawMessage
		if json.Unmarshal(raw.JSON.Raw, &props) != nil {
			continue
		}
		if off, _ := json.Marshal(false); string(props["enabled"]) == string(off) {
			continue // a disabled trait reads nothing
		}
		for p := range props {
			if slices.Contains(inertProperties[name], p) {
				u.Inert = append(u.Inert, name+"."+p)
			}
		}
		if name == "camel" && !namesQuarkus(props["runtimeProvider"]) {
			u.Quarkus = quarkusKeys(props["properties"])
		}
	}
	slices.Sort(u.Inert)
	return u
}

// namesQuarkus tells whether a camel.runtimeProvider value names Camel Quarkus, which reads quarkus.* keys.
func namesQuarkus(raw json.RawMessage) bool {
	var name string
	if json.Unmarshal(raw, &name) != nil {
		return false
	}
	p, err := runtime.ProviderNamed(name)
	return err == nil && p == runtime.Quarkus
}

// quarkusKeys are the quarkus.* keys of a camel.properties list, sorted, without duplicates.
func quarkusKeys(raw json.RawMessage) []string {
	var props []string
	if json.Unmarshal(raw, &props) != nil {
		return nil
	}
	var keys []string
	for _, p := range props {
		if k := PropertyKey(p); strings.HasPrefix(k, "quarkus.") && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// Empty tells whether everything set takes effect.
func (u Unheeded) Empty() bool {
	return len(u.CamelK)+len(u.Unknown)+len(u.UnknownProperties)+len(u.Inert)+len(u.Quarkus) == 0
}

// Typos tells whether some names are of nothing Camel K has.
func (u Unheeded) Typos() bool { return len(u.Unknown)+len(u.UnknownProperties) > 0 }

// Message says, in one line, what takes no effect and why; "" when everything does.
func (u Unheeded) Message() string {
	var parts []string
	if len(u.CamelK) > 0 {
		parts = append(parts, fmt.Sprintf("the Camel K traits %s are kept but do nothing on Caravan, which acts on %s",
			strings.Join(u.CamelK, ", "), strings.Join(Acted, ", ")))
	}
	if len(u.Unknown) > 0 {
		parts = append(parts, fmt.Sprintf("%s names no Camel K trait: check the spelling", strings.Join(u.Unknown, ", ")))
	}
	if len(u.UnknownProperties) > 0 {
		parts = append(parts, fmt.Sprintf("%s names no property of Camel K's trait: check the spelling; it is kept and does nothing",
			strings.Join(u.UnknownProperties, ", ")))
	}
	if len(u.Inert) > 0 {
		parts = append(parts, fmt.Sprintf("%s are kept but do nothing on Caravan (docs/traits.md says what each trait applies)",
			strings.Join(u.Inert, ", ")))
	}
	if len(u.Quarkus) > 0 {
		parts = append(parts, fmt.Sprintf("the camel-main runtime does not read the Quarkus properties %s: set Camel's own (camel.*) instead, "+
			"or run on Camel Quarkus (camel.runtimeProvider=quarkus, caravan run --runtime-provider quarkus, or an operator whose platform's spec.build.runtimeProvider is quarkus)",
			strings.Join(u.Quarkus, ", ")))
	}
	return strings.Join(parts, "; ")
}
