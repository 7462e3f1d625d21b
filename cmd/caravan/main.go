// Command caravan is Caravan's CLI, operator and local cluster.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/caravan-dev/caravan/internal/cli"
	"github.com/caravan-dev/caravan/internal/command"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	root := cli.NewRootCommand(streams)
	if strings.HasPrefix(filepath.Base(os.Args[0]), "kubectl_complete-") {
		// kubectl's completion helper of the plugin: kubectl __complete caravan ARGS runs it with ARGS.
		root.SetArgs(append([]string{cobra.ShellCompRequestCmd}, os.Args[1:]...))
	}
	if strings.HasPrefix(filepath.Base(os.Args[0]), "kubectl-") {
		// Run as a kubectl plugin (kubectl caravan ...).
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl caravan"}
	}
	err := root.ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(command.ExitCode(err))
	}
}
