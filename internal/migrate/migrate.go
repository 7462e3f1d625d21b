// Package migrate says what moving an integration from an operator that is not Caravan's (Camel
// K's) to a Caravan operator keeps and what it changes, for `caravan migrate --dry-run` to show
// before anything moves.
package migrate

import (
	"fmt"
	"slices"
	"strings"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/catalog"
	"github.com/caravan-dev/caravan/internal/inspect"
	"github.com/caravan-dev/caravan/internal/render"
	"github.com/caravan-dev/caravan/internal/runtime"
	"github.com/caravan-dev/caravan/internal/trait"
)

// Plan is what the move of one integration keeps and what will differ under Caravan.
type Plan struct {
	// Keeps says what runs on unchanged after the move.
	Keeps string
	// Differences are what will differ under Caravan, one line each; none when nothing does.
	Differences []string
}

// PlanIntegration plans the move of it to a Caravan operator whose platform builds on target, nil
// when that is not known. installed tells whether a Kamelet of that name is in the integration's
// namespace.
func PlanIntegration(it *camelv1.Integration, installed func(kamelet string) bool, target runtime.Provider) Plan {
	p := Plan{Keeps: keeps(it)}
	traits, err := trait.Parse(it.Spec.Traits)
	if err != nil {
		p.add("its traits are bad input to Caravan: %v; fix them before its spec changes", err)
	}
	provider, why := target, ", as its new operator's platform says"
	if err == nil && traits.Camel.RuntimeProvider() != nil {
		provider, why = traits.Camel.RuntimeProvider(), ", as its camel trait's runtimeProvider says"
	}
	onQuarkus := provider == runtime.Quarkus
	if err == nil && traits.Container.Image() == "" {
		on := "its new operator's runtime provider (camel-main, unless that operator's platform names quarkus)"
		if provider != nil {
			on = providerNames[provider.Name()] + why
		}
		p.add("built by its operator on %s: Caravan builds its own kit on %s when the spec first changes, and its pods roll then",
			providerOf(it), on)
	}
	for _, s := range it.Spec.Sources {
		if _, err := render.SourceLanguage(s); err != nil {
			p.add("%v; until then Caravan cannot render it, and its pods run on only while its spec does not change", err)
		}
	}
	unheeded := trait.Check(it.Spec.Traits)
	if onQuarkus {
		unheeded.Quarkus = nil // Camel Quarkus reads them
	}
	if msg := unheeded.Message(); msg != "" {
		p.add("traits: %s", msg)
	}
	for _, c := range it.Spec.Configuration {
		if c.Type == "property" && strings.HasPrefix(c.Value, "quarkus.") && !onQuarkus {
			p.add("the property %s is for Quarkus, which Caravan's camel-main runtime does not read: run it on Caravan's quarkus provider "+
				"(camel.runtimeProvider=quarkus)", strings.SplitN(c.Value, "=", 2)[0])
		}
	}
	routes, _ := inspect.Integration(catalog.Camel(), &it.Spec)
	if missing := missingKamelets(routes, installed); len(missing) > 0 {
		p.add("the Kamelets %s are not in namespace %s: once the spec changes, the runtime looks for them on its classpath (mvn:org.apache.camel.kamelets:camel-kamelets brings them), or the operator's catalog provides them", strings.Join(missing, ", "), it.Namespace)
	}
	if err := routes.KebabCaseError(); err != nil {
		p.add("%v; Caravan refuses the routes once the spec changes, and its pods run on only until then", err)
	}
	return p
}

// PlanBinding plans the move of a Pipe or KameletBinding of the given generation, which its
// operator last compiled at observedGeneration (its status.observedGeneration).
func PlanBinding(generation, observedGeneration int64) Plan {
	if observedGeneration != generation {
		return Plan{Keeps: "it changed since its operator last compiled it: Caravan makes its Integration anew, and its pods roll"}
	}
	return Plan{Keeps: "its pods run on: Caravan keeps the Integration its operator made from it, and its Deployment, until it changes"}
}

func (p *Plan) add(format string, args ...any) {
	p.Differences = append(p.Differences, fmt.Sprintf(format, args...))
}

// keeps says what the move keeps: the Deployment the other operator made, with its pods, while
// the integration's spec does not change (see the integration controller's kept Deployment).
func keeps(it *camelv1.Integration) string {
	switch {
	case it.Status.Phase == "":
		return "it has not run: Caravan deploys it as it renders it"
	case it.Status.ObservedGeneration != it.Generation:
		return "its spec changed since its operator last deployed it: Caravan deploys it as it renders it, and its pods roll"
	case it.Status.Phase != camelv1.IntegrationPhaseRunning:
		return fmt.Sprintf("it is in phase %s: Caravan keeps its Deployment, if it has one, until its spec changes", it.Status.Phase)
	default:
		return "its pods run on: Caravan keeps its Deployment as it is until its spec changes"
	}
}

// providerNames are Caravan's runtime providers by name, in words.
var providerNames = map[string]string{runtime.MainProviderName: "camel-main", runtime.QuarkusProviderName: "Camel Quarkus"}

// providerOf names the runtime its operator built it on, as its status says.
func providerOf(it *camelv1.Integration) string {
	provider, version := it.Status.RuntimeProvider, it.Status.RuntimeVersion
	if provider == "" {
		provider = runtime.QuarkusProviderName
	}
	if words, ok := providerNames[provider]; ok {
		provider = words
	}
	if version != "" {
		return provider + " (runtime " + version + ")"
	}
	return provider
}

// missingKamelets are the Kamelets routes use that are not installed, sorted.
func missingKamelets(routes inspect.Result, installed func(string) bool) []string {
	var missing []string
	for _, k := range routes.Kamelets {
		if !installed(k) {
			missing = append(missing, k)
		}
	}
	slices.Sort(missing)
	return missing
}
