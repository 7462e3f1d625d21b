package cmdutil

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

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
