// Package tenancy attacks Caravan's authorised tenancy on a full local
// cluster with the admission policies installed and an audit log: who may
// assign work to which operator, orphans, namespace scoping, and moves
// proven clean from the API server's own record.
package tenancy

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/caravan-dev/caravan/test/harness"
)

var (
	// env is the control plane shared by the tests; env.Caravan is the caravan binary built for them.
	env *harness.Env
	// withoutMutatingPolicies: the API server serves no MutatingAdmissionPolicy, as Kubernetes
	// 1.30 to 1.35 do, when WithoutMutatingPoliciesEnv is 1. hack/test.sh runs the tests
	// that hold on both paths so a second time.
	withoutMutatingPolicies = os.Getenv(WithoutMutatingPoliciesEnv) == "1"
)

// WithoutMutatingPoliciesEnv names the variable that starts the tests' cluster without
// MutatingAdmissionPolicy.
const WithoutMutatingPoliciesEnv = "CARAVAN_WITHOUT_MUTATING_POLICIES"

// auditPolicy records, at Metadata level, every write to Caravan's
// resources and to the children operators make, and the lists and watches
// of registrations.
var auditPolicy = []byte(`apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create, update, patch, delete]
  resources:
  - group: camel.apache.org
  - group: apps
    resources: [deployments]
  - group: ""
    resources: [configmaps, services]
- level: Metadata
  verbs: [list, watch]
  resources:
  - group: camel.apache.org
    resources: [integrationoperators]
- level: None
`)

func TestMain(m *testing.M) {
	// The tests' own clients log nothing worth reading.
	ctrl.SetLogger(logr.Discard())
	os.Exit(harness.Main(m, harness.Options{Full: true, AuditPolicy: auditPolicy, BuildCaravan: true,
		WithoutMutatingAdmissionPolicies: withoutMutatingPolicies}, &env))
}

// cli runs the built binary against the test cluster as kubeconfig's user (see harness.Env.CLI).
func cli(t *testing.T, kubeconfig string, args ...string) (string, string, error) {
	t.Helper()
	return env.CLI(t, kubeconfig, args...)
}

// install installs operator id into ns as an administrator, and
// uninstalls it when the test ends.
func install(t *testing.T, ns, id string, args ...string) {
	t.Helper()
	admin := env.Kubeconfig(t, "admin", "system:masters")
	out, errOut, err := cli(t, admin, append([]string{"install", "-n", ns, "-x", id, "--wait"}, args...)...)
	if err != nil {
		t.Fatalf("install %s: %v\n%s\n%s", id, err, out, errOut)
	}
	t.Cleanup(func() { _, _, _ = cli(t, admin, "uninstall", "-n", ns, "-x", id) })
}
