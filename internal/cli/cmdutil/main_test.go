package cmdutil_test

import (
	"os"
	"testing"

	"github.com/caravan-dev/caravan/internal/cli/clitest"
)

func TestMain(m *testing.M) { os.Exit(clitest.RunTests(m)) }
