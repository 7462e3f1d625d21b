// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"slices"
	"strings"
)

// Owner is the owner trait: the keys of the integration's labels (targetLabels) and
// annotations (targetAnnotations) to copy onto the children the operator makes, as in
// Camel K. The keys of the camel.apache.org prefix stay the operator's.
type Owner struct {
	labels, annotations []string
}

func parseOwner(o *object) Owner {
	if o.disabled() {
		return Owner{}
	}
	keys := func(key string) []string {
		var out []string
		for i, k := range o.strs(key) {
			if strings.HasPrefix(k, "camel.apache.org/") {
				o.failItem(key, i, "must not name a camel.apache.org/ key, which the operator sets on the children", k)
				continue
			}
			out = append(out, k)
		}
		return out
	}
	return Owner{labels: keys("targetLabels"), annotations: keys("targetAnnotations")}
}

// copyKeys returns the entries of from whose keys the list names, or nil.
func copyKeys(from map[string]string, keys []string) map[string]string {
	var out map[string]string
	for _, k := range keys {
		v, ok := from[k]
		if !ok {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}

// Labels are the integration's labels to copy onto its children.
func (o Owner) Labels(integration map[string]string) map[string]string {
	return copyKeys(integration, o.labels)
}

// Annotations are the integration's annotations to copy onto its children.
func (o Owner) Annotations(integration map[string]string) map[string]string {
	return copyKeys(integration, o.annotations)
}

// Targets are the label and annotation keys the trait copies.
func (o Owner) Targets() (labels, annotations []string) {
	return slices.Clone(o.labels), slices.Clone(o.annotations)
}
