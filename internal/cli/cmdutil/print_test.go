package cmdutil_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/internal/cli/clitest"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/scheme"
)

func TestAgeIsKubectlStyle(t *testing.T) {
	cases := map[time.Duration]string{
		40 * time.Second: "40s", 5 * time.Minute: "5m", 3 * time.Hour: "3h", 48 * time.Hour: "2d", 49 * time.Hour: "2d1h", 400 * 24 * time.Hour: "400d",
	}
	for d, want := range cases {
		if got := cmdutil.Age(clitest.Now.Add(-d), clitest.Now); got != want {
			t.Errorf("age of %s: got %q, want %q", d, got, want)
		}
	}
	if got := cmdutil.Age(time.Time{}, clitest.Now); got != "<unknown>" {
		t.Errorf("age of an unset time: got %q", got)
	}
}

func TestTableCellsStayOnOneLine(t *testing.T) {
	tb := cmdutil.NewTable("A", "B")
	tb.Add("x", "two\nlines\tand a tab")
	var out bytes.Buffer
	if err := tb.Write(&out, "  "); err != nil {
		t.Fatal(err)
	}
	want := "  A   B\n  x   two lines and a tab\n"
	if out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
}

func TestValidateOutputNamesTheSupportedFormats(t *testing.T) {
	if err := cmdutil.ValidateOutput("yaml", cmdutil.OutputYAML, cmdutil.OutputJSON); err != nil {
		t.Fatal(err)
	}
	if err := cmdutil.ValidateOutput("", cmdutil.OutputYAML); err != nil {
		t.Fatal(err)
	}
	err := cmdutil.ValidateOutput("table", cmdutil.OutputYAML, cmdutil.OutputJSON)
	if err == nil || !strings.Contains(err.Error(), `unsupported output format "table": use one of yaml, json`) {
		t.Fatalf("got %v", err)
	}
}

func TestPrintObjects(t *testing.T) {
	its := clitest.SampleIntegrations()
	its[0].ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "caravan", Operation: metav1.ManagedFieldsOperationApply}}
	for _, tc := range []struct {
		name   string
		format string
		objs   []client.Object
		single bool
	}{
		{name: "print/one-integration.yaml", format: cmdutil.OutputYAML, objs: clitest.Objects(its[0]), single: true},
		{name: "print/integrations-list.json", format: cmdutil.OutputJSON, objs: clitest.Objects(its[0], its[2])},
		{name: "print/integrations.name", format: cmdutil.OutputName, objs: clitest.Objects(its...)},
		{name: "print/empty-list.yaml", format: cmdutil.OutputYAML},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := cmdutil.PrintObjects(&out, tc.format, scheme.New(), tc.objs, tc.single); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(out.String(), "managedFields") {
				t.Error("managed fields are printed")
			}
			clitest.AssertGolden(t, tc.name, out.String())
		})
	}
}
