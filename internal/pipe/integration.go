// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package pipe

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/trait"
)

// KameletSourceSuffix ends the name of the source holding a Kamelet used by a binding.
const KameletSourceSuffix = ".kamelet.yaml"

// Implicit dependencies: the kamelet component, and the http component that calls
// Integrations.
const (
	dependencyKamelet = "camel:kamelet"
	dependencyHTTP    = "camel:http"
)

// integration builds the Integration spec: spec.integration, with the Pipe's fields and
// what the endpoints need over it.
func (c *compiler) integration(spec camelv1.PipeSpec, flows []camelv1.RawObject) (camelv1.IntegrationSpec, error) {
	var out camelv1.IntegrationSpec
	if spec.Integration != nil {
		out = *spec.Integration.DeepCopy()
	}
	out.Flows = append(flows, out.Flows...)
	if spec.Replicas != nil {
		replicas := *spec.Replicas
		out.Replicas = &replicas
	}
	if spec.ServiceAccountName != "" {
		out.ServiceAccountName = spec.ServiceAccountName
	}
	out.Dependencies = c.dependencies(out.Dependencies, spec.Dependencies)
	traits, err := withProperties(trait.Merge(out.Traits, spec.Traits), c.propertyEntries())
	if err != nil {
		return camelv1.IntegrationSpec{}, err
	}
	out.Traits = traits
	sources, err := c.kameletSources()
	if err != nil {
		return camelv1.IntegrationSpec{}, err
	}
	for i, s := range sources {
		if slices.ContainsFunc(out.Sources, func(o camelv1.SourceSpec) bool { return o.Name == s.Name }) {
			return camelv1.IntegrationSpec{}, fmt.Errorf("spec.integration.sources: source %s is reserved for kamelet %s: rename it",
				s.Name, kameletOf(sources[:i+1]))
		}
		if slices.ContainsFunc(sources[:i], func(o camelv1.SourceSpec) bool { return o.Name == s.Name }) {
			return camelv1.IntegrationSpec{}, fmt.Errorf("kamelet %s: its source %s has the name of another Kamelet's source", kameletOf(sources[:i+1]), s.Name)
		}
	}
	out.Sources = append(out.Sources, sources...)
	return out, nil
}

// kameletOf is the Kamelet whose source ends sources: the one of the last *.kamelet.yaml source.
func kameletOf(sources []camelv1.SourceSpec) string {
	for i := len(sources) - 1; i >= 0; i-- {
		if name, ok := strings.CutSuffix(sources[i].Name, KameletSourceSuffix); ok {
			return name
		}
	}
	return ""
}

// dependencies joins the given lists with the Kamelets' and implicit dependencies, sorted
// and without duplicates.
func (c *compiler) dependencies(lists ...[]string) []string {
	var all []string
	for _, l := range lists {
		all = append(all, l...)
	}
	for _, k := range c.kamelets {
		all = append(all, k.Spec.Dependencies...)
	}
	if len(c.kamelets) > 0 || len(c.missing) > 0 {
		all = append(all, dependencyKamelet)
	}
	if c.callsIntegration {
		all = append(all, dependencyHTTP)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	if len(all) == 0 {
		return nil
	}
	return all
}

// propertyEntries are the Kamelet instance properties as camel.properties entries, sorted by key.
func (c *compiler) propertyEntries() []string {
	out := make([]string, 0, len(c.properties))
	for _, k := range slices.Sorted(maps.Keys(c.properties)) {
		out = append(out, trait.Property{Key: k, Value: c.properties[k]}.Entry())
	}
	return out
}

// withProperties puts entries before the camel trait's own properties, keeping the trait's
// other keys. The traits are not modified in place.
func withProperties(traits camelv1.Traits, entries []string) (camelv1.Traits, error) {
	if len(entries) == 0 {
		return traits, nil
	}
	camel := map[string]json.RawMessage{}
	if raw := traits["camel"].Raw; len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &camel); err != nil || camel == nil {
			return nil, fmt.Errorf("traits.camel: must be an object")
		}
	}
	var own []string
	if raw, ok := camel["properties"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &own); err != nil {
			return nil, fmt.Errorf("traits.camel.properties: must be a list of key=value strings")
		}
	}
	props, err := json.Marshal(slices.Concat(entries, own))
	if err != nil {
		return nil, err
	}
	camel["properties"] = props
	raw, err := json.Marshal(camel)
	if err != nil {
		return nil, err
	}
	out := maps.Clone(traits)
	if out == nil {
		out = camelv1.Traits{}
	}
	out["camel"] = rawObject(raw)
	return out, nil
}

// kameletSources are the Kamelets used, sorted by name, each as KameletSources gives it.
func (c *compiler) kameletSources() ([]camelv1.SourceSpec, error) {
	var out []camelv1.SourceSpec
	for _, name := range slices.Sorted(maps.Keys(c.kamelets)) {
		sources, err := KameletSources(c.kamelets[name])
		if err != nil {
			return nil, err
		}
		out = append(out, sources...)
	}
	return out, nil
}

// KameletSources are the sources an integration that uses Kamelet k mounts, as Camel K's kamelets
// trait adds them: k in YAML, named <name>.kamelet.yaml, then the sources of its spec.sources as
// written. A source of spec.sources must hold its content: a contentRef would name a ConfigMap of
// the Kamelet's namespace, which the integration cannot mount.
func KameletSources(k *camelv1.Kamelet) ([]camelv1.SourceSpec, error) {
	content, err := KameletYAML(k)
	if err != nil {
		return nil, fmt.Errorf("kamelet %s: %w", k.Name, err)
	}
	out := []camelv1.SourceSpec{{Name: k.Name + KameletSourceSuffix, Content: string(content), Language: camelv1.LanguageYAML,
		FromKamelet: ptr.To(true)}}
	for i, src := range k.Spec.Sources {
		switch {
		case src.Name == "":
			return nil, fmt.Errorf("kamelet %s: spec.sources[%d] has no name", k.Name, i)
		case src.ContentRef != "":
			return nil, fmt.Errorf("kamelet %s: spec.sources[%d] (%s) takes its content from the ConfigMap %s, which an integration of another namespace cannot mount: "+
				"put the content in the Kamelet", k.Name, i, src.Name, src.ContentRef)
		case slices.ContainsFunc(out, func(o camelv1.SourceSpec) bool { return o.Name == src.Name }):
			return nil, fmt.Errorf("kamelet %s: spec.sources[%d]: two sources are named %s", k.Name, i, src.Name)
		}
		src.FromKamelet = ptr.To(true)
		out = append(out, *src.DeepCopy())
	}
	return out, nil
}

// KameletYAML is the Kamelet as the runtime loads it from a *.kamelet.yaml file: its name,
// type label, definition, dependencies and template. Other metadata and the status are left
// out, so the source changes only when the Kamelet's behaviour does.
func KameletYAML(k *camelv1.Kamelet) ([]byte, error) {
	metadata := map[string]any{"name": k.Name}
	if t := k.Labels[camelv1.KameletTypeLabel]; t != "" {
		metadata["labels"] = map[string]string{camelv1.KameletTypeLabel: t}
	}
	spec := map[string]any{}
	if k.Spec.Definition != nil && len(k.Spec.Definition.Raw) > 0 {
		spec["definition"] = json.RawMessage(k.Spec.Definition.Raw)
	}
	if len(k.Spec.Dependencies) > 0 {
		spec["dependencies"] = k.Spec.Dependencies
	}
	if k.Spec.Template != nil && len(k.Spec.Template.Raw) > 0 {
		spec["template"] = json.RawMessage(k.Spec.Template.Raw)
	}
	doc, err := json.Marshal(map[string]any{
		"apiVersion": camelv1.GroupVersion.String(),
		"kind":       kindKamelet,
		"metadata":   metadata,
		"spec":       spec,
	})
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(doc)
}
