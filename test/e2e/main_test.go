// Package e2e drives Caravan end to end: its built binary, operators
// installed as pods of the operator image built from this tree, each with
// its own ServiceAccount, and a full local cluster (controllers,
// scheduler, kwok, the process node) on which pods reach Running.
package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/caravan-dev/caravan/test/harness"
)

var (
	// caravanBin is the caravan binary built for this test run.
	caravanBin string
	// env is the control plane shared by the tests.
	env *harness.Env
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// The tests' own clients log nothing; the operators' logs are the
	// ones a failing test prints.
	ctrl.SetLogger(logr.Discard())
	dir, err := os.MkdirTemp("", "caravan-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	caravanBin, err = harness.BuildCaravan(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env, err = harness.Start(context.Background(), harness.Options{Full: true, Caravan: caravanBin})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the test control plane:", err)
		return 1
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the test control plane:", err)
		code = max(code, 1)
	}
	return code
}
