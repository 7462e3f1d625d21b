// Package cli builds the caravan command tree from the command groups: runcmd (run and build),
// movecmd (moves), installcmd (operators), observecmd (reading), local and operatorcmd. Each
// command is an Options struct with Complete, Validate and Run (cmdutil.Command), built by a
// NewCmdX function whose RunE runs them with cmdutil.Run; cmdutil holds the shared flags.
package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
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
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cmdutil.WithExitCode(cmdutil.ExitUsage, err) })
	return root
}

// withUsageOnArgErrors makes a wrong number of arguments, on cmd and its subcommands, name the
// command's usage line and its help, as kubectl does, instead of cobra's bare count.
func withUsageOnArgErrors(cmd *cobra.Command) {
	if args := cmd.Args; args != nil {
		cmd.Args = func(c *cobra.Command, a []string) error {
			if err := args(c, a); err != nil {
				return cmdutil.WithExitCode(cmdutil.ExitUsage,
					fmt.Errorf("%w\nUsage: %s\nSee '%s --help' for examples", err, c.UseLine(), c.CommandPath()))
			}
			return nil
		}
	}
	for _, sub := range cmd.Commands() {
		withUsageOnArgErrors(sub)
	}
}
