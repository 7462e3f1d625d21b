package cmdutil

import (
	"fmt"

	"github.com/spf13/pflag"
)

// DryRun is kubectl's --dry-run: none applies, client prints without contacting the cluster,
// server sends the request with dryRun=All, so that admission runs and nothing is stored.
type DryRun string

// The --dry-run modes.
const (
	DryRunNone   DryRun = "none"
	DryRunClient DryRun = "client"
	DryRunServer DryRun = "server"
)

// String is the mode, none when unset.
func (d *DryRun) String() string {
	if *d == "" {
		return string(DryRunNone)
	}
	return string(*d)
}

// Set reads a mode; true and false are kept for scripts written when the flag was boolean.
func (d *DryRun) Set(s string) error {
	switch s {
	case "none", "false":
		*d = DryRunNone
	case "client", "true":
		*d = DryRunClient
	case "server":
		*d = DryRunServer
	default:
		return fmt.Errorf(`must be "none", "client" or "server", got %q`, s)
	}
	return nil
}

// Type names the flag's value in help.
func (d *DryRun) Type() string { return "mode" }

// Client tells whether the command prints and contacts no cluster.
func (d DryRun) Client() bool { return d == DryRunClient }

// Server tells whether the command sends its writes with dryRun=All.
func (d DryRun) Server() bool { return d == DryRunServer }

// Any tells whether the command changes nothing.
func (d DryRun) Any() bool { return d == DryRunClient || d == DryRunServer }

// AddDryRunFlag registers --dry-run on fs; given alone it means client, as kubectl's.
func AddDryRunFlag(fs *pflag.FlagSet, d *DryRun, usage string) {
	fs.Var(d, "dry-run", usage)
	fs.Lookup("dry-run").NoOptDefVal = string(DryRunClient)
}
