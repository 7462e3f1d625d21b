package trait

import (
	"slices"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// Acted are the traits Caravan acts on.
var Acted = []string{"affinity", "builder", "camel", "container", "cron", "deployment", "environment", "health", "ingress", "jvm", "kamelets", "mount", "owner", "pdb", "prometheus", "pull-secret", "service", "toleration"}

// camelKTraits are the traits of Camel K 2.x, addons included: names a
// Camel K user may set and Caravan keeps as written.
var camelKTraits = []string{
	"3scale", "affinity", "aws-secrets-manager", "azure-key-vault", "builder", "camel", "container", "cron",
	"dependencies", "deployer", "deployment", "environment", "error-handler", "gateway", "gc", "gcp-secret-manager",
	"git", "gitops", "hashicorp-vault", "health", "ingress", "init-containers", "istio", "jolokia", "jvm", "kamelets", "keda",
	"knative", "knative-service", "logging", "master", "mount", "openapi", "owner", "pdb", "platform", "pod",
	"prometheus", "pull-secret", "quarkus", "registry", "resume", "route", "security-context", "service",
	"service-binding", "strimzi", "telemetry", "toleration",
}

// Ignored splits the trait names of t that Caravan does not act on into
// Camel K's and unknown ones, each sorted. Camel K's are kept, and do
// nothing here; no Camel K trait has an unknown one's name: it is a
// typo, or a trait of another project.
func Ignored(t camelv1.Traits) (camelK, unknown []string) {
	for name := range t {
		switch {
		case slices.Contains(Acted, name):
		case slices.Contains(camelKTraits, name):
			camelK = append(camelK, name)
		default:
			unknown = append(unknown, name)
		}
	}
	slices.Sort(camelK)
	slices.Sort(unknown)
	return camelK, unknown
}
