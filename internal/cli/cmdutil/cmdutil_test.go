package cmdutil

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// recorder records the steps it ran and fails the one named in failAt.
type recorder struct {
	ran    []string
	failAt string
}

func (r *recorder) step(name string) error {
	r.ran = append(r.ran, name)
	if name == r.failAt {
		return errors.New(name + " failed")
	}
	return nil
}

func (r *recorder) Complete() error           { return r.step("Complete") }
func (r *recorder) Validate() error           { return r.step("Validate") }
func (r *recorder) Run(context.Context) error { return r.step("Run") }

func TestACommandRunsItsStepsInOrderAndStopsAtTheFirstError(t *testing.T) {
	for failAt, want := range map[string][]string{
		"":         {"Complete", "Validate", "Run"},
		"Complete": {"Complete"},
		"Validate": {"Complete", "Validate"},
		"Run":      {"Complete", "Validate", "Run"},
	} {
		r := &recorder{failAt: failAt}
		err := Run(context.Background(), r)
		if (err != nil) != (failAt != "") {
			t.Errorf("failing at %q: error %v", failAt, err)
		}
		if !reflect.DeepEqual(r.ran, want) {
			t.Errorf("failing at %q: ran %v, want %v", failAt, r.ran, want)
		}
	}
}

func TestDryRunTakesKubectlsModes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want DryRun
		err  string
	}{
		{args: nil, want: ""},
		{args: []string{"--dry-run"}, want: DryRunClient},
		{args: []string{"--dry-run=client"}, want: DryRunClient},
		{args: []string{"--dry-run=server"}, want: DryRunServer},
		{args: []string{"--dry-run=none"}, want: DryRunNone},
		{args: []string{"--dry-run=true"}, want: DryRunClient},
		{args: []string{"--dry-run=false"}, want: DryRunNone},
		{args: []string{"--dry-run=maybe"}, err: `must be "none", "client" or "server", got "maybe"`},
	} {
		var d DryRun
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		AddDryRunFlag(fs, &d, "")
		err := fs.Parse(tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: got %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || d != tc.want {
			t.Errorf("%v: got %q (%v), want %q", tc.args, d, err, tc.want)
		}
	}
}
