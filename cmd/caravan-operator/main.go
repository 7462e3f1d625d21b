// Command caravan-operator is the operator image's binary. It has
// `caravan operator`, `caravan fleet`, `caravan builder` (for builder
// pods) and `caravan version`, with client-go's cluster flags. It links
// no package of the CLI (kubectl, kustomize, Helm, the bench, the local
// cluster), so that each operator loads less; TestTheOperatorLinksNoCLI
// holds it to that.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/caravan-dev/caravan/internal/operatorcmd"
	"github.com/caravan-dev/caravan/internal/version"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	root := &cobra.Command{
		Use:           "caravan",
		Short:         "Caravan's operator",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	kube := &operatorcmd.Flags{}
	kube.AddFlags(root.PersistentFlags())
	root.AddCommand(operatorcmd.NewCmd(kube, os.Stderr), operatorcmd.NewFleetCmd(kube, os.Stderr), operatorcmd.NewBuilderCmd(os.Stderr), &cobra.Command{
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
