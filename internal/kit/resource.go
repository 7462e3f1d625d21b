package kit

import (
	"encoding/json"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/trait"
)

// A kit's Spec is stored on the IntegrationKit the way Camel K stores
// what defines a kit: dependencies and repositories in the spec, the base
// image in the builder trait, the runtime in the camel trait.

// ToResource returns the IntegrationKit spec that records s.
func ToResource(s Spec) (camelv1.IntegrationKitSpec, error) {
	b := map[string]any{"baseImage": s.BaseImage}
	if len(s.BuildProperties) > 0 {
		b["properties"] = s.BuildProperties
	}
	for _, r := range trait.BuilderResources {
		if quantity, ok := s.BuildResources[r.Key]; ok {
			b[r.TasksProperty] = []string{trait.BuilderTask + ":" + quantity}
		}
	}
	builder, err := json.Marshal(b)
	if err != nil {
		return camelv1.IntegrationKitSpec{}, err
	}
	camel, err := json.Marshal(map[string]string{"runtimeVersion": s.RuntimeVersion, "runtimeProvider": s.RuntimeProvider})
	if err != nil {
		return camelv1.IntegrationKitSpec{}, err
	}
	return camelv1.IntegrationKitSpec{
		Dependencies: s.Dependencies,
		Repositories: s.Repositories,
		Traits: camelv1.Traits{
			"builder": {JSON: apiextensionsv1.JSON{Raw: builder}},
			"camel":   {JSON: apiextensionsv1.JSON{Raw: camel}},
		},
	}, nil
}

// FromResource reads the Spec a platform kit records, and checks it
// against the hash the kit is labelled with, so a kit edited by hand is
// never built as if it were another.
func FromResource(k *camelv1.IntegrationKit) (Spec, error) {
	var builder map[string]json.RawMessage
	if t, ok := k.Spec.Traits["builder"]; ok {
		if err := json.Unmarshal(t.Raw, &builder); err != nil {
			return Spec{}, fmt.Errorf("kit %s: trait builder: %w", k.Name, err)
		}
	}
	camel, err := camelTrait(k)
	if err != nil {
		return Spec{}, err
	}
	s := Spec{
		OperatorID:      k.Annotations[camelv1.OperatorIDAnnotation],
		RuntimeVersion:  camel.RuntimeVersion,
		RuntimeProvider: camel.RuntimeProvider,
		Dependencies:    NormalizeDependencies(k.Spec.Dependencies),
	}.WithRepositories(k.Spec.Repositories...)
	if err := s.readBuilder(builder); err != nil {
		return Spec{}, fmt.Errorf("kit %s: trait builder: %w", k.Name, err)
	}
	if want := k.Labels[SpecHashLabel]; want != s.Hash() {
		return Spec{}, fmt.Errorf("kit %s: its spec does not match its %s label %q (got %q): it was edited; delete it and a new one is made",
			k.Name, SpecHashLabel, want, s.Hash())
	}
	return s, nil
}

// readBuilder reads the base image, build properties and build resources of a kit's builder trait.
func (s *Spec) readBuilder(builder map[string]json.RawMessage) error {
	if raw, ok := builder["baseImage"]; ok {
		if err := json.Unmarshal(raw, &s.BaseImage); err != nil {
			return err
		}
	}
	if raw, ok := builder["properties"]; ok {
		if err := json.Unmarshal(raw, &s.BuildProperties); err != nil {
			return err
		}
	}
	for _, r := range trait.BuilderResources {
		raw, ok := builder[r.TasksProperty]
		if !ok {
			continue
		}
		var entries []string
		if err := json.Unmarshal(raw, &entries); err != nil {
			return err
		}
		for _, e := range entries {
			if quantity, ok := strings.CutPrefix(e, trait.BuilderTask+":"); ok {
				if s.BuildResources == nil {
					s.BuildResources = map[string]string{}
				}
				s.BuildResources[r.Key] = quantity
			}
		}
	}
	return nil
}

// kitCamel is what a kit records in its camel trait: the runtime it holds.
type kitCamel struct {
	RuntimeVersion  string `json:"runtimeVersion"`
	RuntimeProvider string `json:"runtimeProvider"`
}

// camelTrait reads the camel trait of kit k; a kit without one records nothing.
func camelTrait(k *camelv1.IntegrationKit) (kitCamel, error) {
	var camel kitCamel
	if t, ok := k.Spec.Traits["camel"]; ok {
		if err := json.Unmarshal(t.Raw, &camel); err != nil {
			return kitCamel{}, fmt.Errorf("kit %s: trait camel: %w", k.Name, err)
		}
	}
	return camel, nil
}

// ProviderOf is the runtime provider a kit records in its camel trait, "" when it names none
// (a kit of an operator older than providers, or one wrapping an image).
func ProviderOf(k *camelv1.IntegrationKit) string {
	// A trait that does not parse names no provider: FromResource refuses such a kit.
	camel, _ := camelTrait(k)
	return strings.TrimSpace(camel.RuntimeProvider)
}
