package observecmd

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/cli/clitest"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/version"
)

func TestOperatorVersions(t *testing.T) {
	iops := append(clitest.SampleOperators(), camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: "pre-created"}})
	var out bytes.Buffer
	if err := writeOperatorVersions(&out, iops, clitest.Now); err != nil {
		t.Fatal(err)
	}
	clitest.AssertGolden(t, "version/operators.golden", out.String())
}

func TestVersionValidate(t *testing.T) {
	for _, tc := range []struct {
		o    VersionOptions
		want string
	}{
		{o: VersionOptions{OperatorID: "a", All: true}, want: "exclude each other"},
		{o: VersionOptions{OperatorID: "A.b"}, want: `--operator-id: invalid operator id "A.b"`},
	} {
		if err := tc.o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.o, err, tc.want)
		}
	}
}

func TestVersionWithoutFlagsDoesNotNeedACluster(t *testing.T) {
	var out, errOut bytes.Buffer
	cmd := NewCmdVersion(cmdutil.NewKubeFlags(), genericiooptions.IOStreams{Out: &out, ErrOut: &errOut})
	cmd.SetArgs([]string{})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out.String() != "Client: "+version.Get()+"\n" || errOut.Len() != 0 {
		t.Fatalf("got %q, %q", out.String(), errOut.String())
	}
}

func TestVersionPrintsTheBuildAsYAMLOrJSON(t *testing.T) {
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		cmd := NewCmdVersion(cmdutil.NewKubeFlags(), genericiooptions.IOStreams{Out: &out, ErrOut: &bytes.Buffer{}})
		cmd.SetArgs(args)
		err := cmd.ExecuteContext(context.Background())
		return out.String(), err
	}
	out, err := run("--client", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var got versions
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if got.Client.Version != version.Get() || got.Client.GoVersion != runtime.Version() || got.Client.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Fatalf("got %+v", got.Client)
	}
	out, err = run("-o", "yaml")
	if err != nil || !strings.Contains(out, "clientVersion:\n") || !strings.Contains(out, "  goVersion: "+runtime.Version()+"\n") {
		t.Fatalf("got %v:\n%s", err, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", "wide"}, `-o/--output "wide" is not supported`},
		{[]string{"--client", "--all"}, "--client prints the client's version only"},
	} {
		if _, err := run(tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.args, err, tc.want)
		}
	}
}
