// Package api_test checks Caravan's CustomResourceDefinitions on a real
// API server: Camel K resources apply unchanged and keep every field, and
// bad input is refused with a message a user can act on.
package api_test

import (
	"os"
	"testing"

	"github.com/caravan-dev/caravan/test/harness"
)

var env *harness.Env

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Options{PodMonitors: true}, &env))
}
