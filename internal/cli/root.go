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
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
	withExplainedErrors(root, kube)
	registerCompletions(root, kube)
	// The options command lists the global flags, which the help of each command leaves out.
	templates.ActsAsRootCommand(root, []string{"options"}, groups...)
	flagError := root.FlagErrorFunc()
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return command.WithExitCode(command.ExitUsage, flagError(c, explainFlagError(err)))
	})
	return root
}

// withExplainedErrors passes the errors of cmd and its subcommands through kube.Explain, which
// names an API server that cannot be reached and gives missing resources and rights their exit
// codes.
func withExplainedErrors(cmd *cobra.Command, kube *cmdutil.KubeFlags) {
	if run := cmd.RunE; run != nil {
		cmd.RunE = func(c *cobra.Command, args []string) error { return kube.Explain(run(c, args)) }
	}
	for _, sub := range cmd.Commands() {
		withExplainedErrors(sub, kube)
	}
}

// explainFlagError says what a duration flag takes when its value is not one: Go's parser says
// "time: missing unit in duration" of a bare number, which kubectl's --timeout refuses too.
func explainFlagError(err error) error {
	var invalid *pflag.InvalidValueError
	if !errors.As(err, &invalid) || invalid.GetFlag() == nil || invalid.GetFlag().Value.Type() != "duration" {
		return err
	}
	value, flag := invalid.GetValue(), invalid.GetFlag().Name
	if _, err := strconv.ParseFloat(value, 64); err == nil {
		return fmt.Errorf("--%s %q: give a unit, such as %ss or %sm", flag, value, value, value)
	}
	return fmt.Errorf("--%s %q: not a duration: give a number and a unit, such as 30s, 2m or 1h", flag, value)
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
