// Package e2e drives Caravan end to end: its built binary, operators
// installed as pods of the operator image built from this tree, each with
// its own ServiceAccount, and a full local cluster (controllers,
// scheduler, kwok, the process node) on which pods reach Running.
package e2e

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/caravan-dev/caravan/test/harness"
)

// env is the control plane shared by the tests; env.Caravan is the caravan binary built for them.
var env *harness.Env

func TestMain(m *testing.M) {
	// The tests' own clients log nothing; the operators' logs are the
	// ones a failing test prints.
	ctrl.SetLogger(logr.Discard())
	// As root (CI runs as root), the real pods run on a real kubelet.
	os.Exit(harness.Main(m, harness.Options{Full: true, BuildCaravan: true, KubeletNode: true}, &env))
}
