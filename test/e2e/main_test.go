// Package e2e drives Caravan end to end through its built binary, on the
// local cluster.
package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/caravan-dev/caravan/test/harness"
)

// caravanBin is the caravan binary built for this test run.
var caravanBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
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
	return m.Run()
}
