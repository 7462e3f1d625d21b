// Package cli builds the caravan command tree from the command groups: runcmd (run and build),
// movecmd (moves), installcmd (operators), observecmd (reading), local, and internal/operatorcmd,
// which the operator image shares. Each command is an Options struct with Complete, Validate and
// Run (command.Command), built by a NewCmdX function whose RunE runs them with cmdutil.Run, which
// first fills in the cluster the command's Preamble asks for (cmdutil.Cluster); cmdutil holds the
// shared flags.
package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/command"
)

// NewRootCommand builds the caravan command tree.
func NewRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:   "caravan",
		Short: "Run Apache Camel integrations on Kubernetes, with many operators on one cluster",
		Long: `Caravan runs Apache Camel integrations on Kubernetes with the camel.apache.org
resources of Camel K. Each operator has an id and owns the integrations whose
camel.apache.org/operator.id annotation names it.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	kube := cmdutil.NewKubeFlags()
	kube.AddFlags(root.PersistentFlags())
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.AddCommand(commands(kube, streams)...)
	withUsageOnArgErrors(root)
	registerCompletions(root, kube)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return command.WithExitCode(command.ExitUsage, err) })
	return root
}

// withUsageOnArgErrors makes a wrong number of arguments, on cmd and its subcommands, name the
// command's usage line and its help, as kubectl does, instead of cobra's bare count. A group of
// commands prints its help alone, and refuses a command it does not have.
func withUsageOnArgErrors(cmd *cobra.Command) {
	if cmd.HasSubCommands() && !cmd.Runnable() {
		cmd.Use += " [command]"
		cmd.DisableFlagsInUseLine = true
		// Usage names the group once, as cobra does for a group that does not run.
		cmd.SetUsageTemplate(strings.Replace(cmd.UsageTemplate(), "{{if .Runnable}}\n  {{.UseLine}}{{end}}", "", 1))
		cmd.Args = unknownCommand
		cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	}
	if args := cmd.Args; args != nil {
		cmd.Args = func(c *cobra.Command, a []string) error {
			if err := args(c, a); err != nil {
				return command.WithExitCode(command.ExitUsage,
					fmt.Errorf("%w\nUsage: %s\nSee '%s --help' for examples", err, c.UseLine(), c.CommandPath()))
			}
			return nil
		}
	}
	for _, sub := range cmd.Commands() {
		withUsageOnArgErrors(sub)
	}
}

// unknownCommand refuses an argument to a group of commands, naming the commands it is close to.
func unknownCommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
	if near := c.SuggestionsFor(args[0]); len(near) > 0 {
		msg += ": did you mean " + strings.Join(near, " or ") + "?"
	}
	return errors.New(msg)
}
