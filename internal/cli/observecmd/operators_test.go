package observecmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/cli/clitest"
)

func TestOperatorsTables(t *testing.T) {
	iops := clitest.SampleOperators()
	iops = append(iops, camelv1alpha1.IntegrationOperator{})
	iops[3].Name = "pre-created"
	for _, tc := range []struct {
		name      string
		withCount bool
		counts    map[string]int
	}{
		{name: "operators", withCount: true, counts: map[string]int{"tenant-a": 12, "tenant-c": 1}},
		{name: "operators-count-forbidden", withCount: true},
		{name: "operators-without-count"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := operatorsTable(iops, tc.withCount, tc.counts, clitest.Now).Write(&out, ""); err != nil {
				t.Fatal(err)
			}
			clitest.AssertGolden(t, "operators/"+tc.name+".golden", out.String())
		})
	}
}

// runTestOperators runs `caravan operators` with the test operators
// registered and the test integrations, in two namespaces, on the API
// server.
func runTestOperators(t *testing.T, o OperatorsOptions) (string, string) {
	t.Helper()
	newGetFixture(t)
	var out, errOut bytes.Buffer
	o.Client = clitest.Cluster(t).Client
	o.now = func() time.Time { return clitest.Now }
	o.IOStreams = genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String()
}

func TestOperatorsRunCountsIntegrationsByLabel(t *testing.T) {
	out, errOut := runTestOperators(t, OperatorsOptions{Count: true})
	if errOut != "" {
		t.Fatalf("stderr %q", errOut)
	}
	clitest.AssertGolden(t, "operators/run.golden", out)
}

func TestOperatorsRunPrintsYAML(t *testing.T) {
	out, _ := runTestOperators(t, OperatorsOptions{Output: "yaml", Count: true})
	for _, want := range []string{"kind: List", "kind: IntegrationOperator", "name: tenant-a", "staleAfterSeconds: 6"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}
