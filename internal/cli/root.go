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
	"k8s.io/kubectl/pkg/cmd/options"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/command"
)

// NewRootCommand builds the caravan command tree, whose help, usage and flag errors are kubectl's.
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
	groups := commandGroups(kube, streams)
	groups.Add(root)
	root.AddCommand(otherCommands(kube, streams)...)
	withUsageOnArgErrors(root)
	registerCompletions(root, kube)
	// The options command lists the global flags, which the help of each command leaves out.
	templates.ActsAsRootCommand(root, []string{"options"}, groups...)
	flagError := root.FlagErrorFunc()
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return command.WithExitCode(command.ExitUsage, flagError(c, err))
	})
	return root
}

// newCmdOptions builds `caravan options`, kubectl's command that prints the flags every command takes.
func newCmdOptions(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := options.NewCmdOptions(streams.Out)
	cmd.Example = `  # Print the flags that every command takes
  caravan options`
	// Its help prints the flags too: kubectl's prints nothing.
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) { _ = c.Usage() })
	return cmd
}

// withUsageOnArgErrors makes a wrong number of arguments, on cmd and its subcommands, name the
// command's usage line and its help, as kubectl does, instead of cobra's bare count. A group of
// commands prints its help alone, and refuses a command it does not have.
func withUsageOnArgErrors(cmd *cobra.Command) {
	// kubectl's help appends [options] to the usage line, in place of cobra's [flags].
	cmd.DisableFlagsInUseLine = true
	if cmd.HasSubCommands() && !cmd.Runnable() {
		cmd.Use += " [command]"
		// SuggestionsFor suggests by prefix alone until the distance is set; 2 is cobra's default.
		cmd.SuggestionsMinimumDistance = 2
		cmd.Args = unknownCommand
		cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	} else if args := cmd.Args; args != nil {
		cmd.Args = func(c *cobra.Command, a []string) error {
			if err := args(c, a); err != nil {
				return command.WithExitCode(command.ExitUsage,
					fmt.Errorf("%w\nUsage: %s\nSee '%s --help' for examples", err, usageLine(c), c.CommandPath()))
			}
			return nil
		}
	}
	for _, sub := range cmd.Commands() {
		withUsageOnArgErrors(sub)
	}
}

// usageLine is cmd's usage line as kubectl's help prints it: with [options] if it takes flags.
func usageLine(cmd *cobra.Command) string {
	if cmd.HasFlags() {
		return cmd.UseLine() + " [options]"
	}
	return cmd.UseLine()
}

// unknownCommand refuses an argument to a group of commands, naming the commands it is close to
// as kubectl does.
func unknownCommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
	if near := c.SuggestionsFor(args[0]); len(near) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(near, "\n\t")
	}
	return command.WithExitCode(command.ExitUsage, errors.New(msg))
}
