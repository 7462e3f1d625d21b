// Command caravan-operator is the operator image's binary. It has
// `caravan operator`, `caravan fleet`, `caravan builder` (for builder
// pods) and `caravan version`, with client-go's cluster flags. It has
// none of the CLI's other commands (the bench, the local cluster, Helm,
// kustomize), so that each operator loads less.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/caravan-dev/caravan/internal/cli/operatorcmd"
	"github.com/caravan-dev/caravan/internal/version"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	root := &cobra.Command{
		Use:           "caravan",
		Short:         "Caravan's operator",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	kube := &operatorcmd.Flags{}
	kube.AddFlags(root.PersistentFlags())
	root.AddCommand(operatorcmd.NewCmd(kube, streams), operatorcmd.NewFleetCmd(kube, streams), operatorcmd.NewBuilderCmd(streams), &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "Client: %s\n", version.Get())
			return err
		},
	})
	err := root.ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
