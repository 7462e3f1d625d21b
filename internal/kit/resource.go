package kit

import (
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
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
	var builder struct {
		BaseImage  string   `json:"baseImage"`
		Properties []string `json:"properties"`
	}
	var camel struct {
		RuntimeVersion  string `json:"runtimeVersion"`
		RuntimeProvider string `json:"runtimeProvider"`
	}
	if t, ok := k.Spec.Traits["builder"]; ok {
		if err := json.Unmarshal(t.Raw, &builder); err != nil {
			return Spec{}, fmt.Errorf("kit %s: trait builder: %w", k.Name, err)
		}
	}
	if t, ok := k.Spec.Traits["camel"]; ok {
		if err := json.Unmarshal(t.Raw, &camel); err != nil {
			return Spec{}, fmt.Errorf("kit %s: trait camel: %w", k.Name, err)
		}
	}
	s := Spec{
		OperatorID:      k.Annotations[camelv1.OperatorIDAnnotation],
		BaseImage:       builder.BaseImage,
		RuntimeVersion:  camel.RuntimeVersion,
		RuntimeProvider: camel.RuntimeProvider,
		Dependencies:    NormalizeDependencies(k.Spec.Dependencies),
		BuildProperties: builder.Properties,
	}.WithRepositories(k.Spec.Repositories...)
	if want := k.Labels[SpecHashLabel]; want != s.Hash() {
		return Spec{}, fmt.Errorf("kit %s: its spec does not match its %s label %q (got %q): it was edited; delete it and a new one is made",
			k.Name, SpecHashLabel, want, s.Hash())
	}
	return s, nil
}
