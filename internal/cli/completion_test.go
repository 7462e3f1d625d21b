package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/caravan-dev/caravan/internal/cli/clitest"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/cli/observecmd"
	"github.com/caravan-dev/caravan/internal/localcluster"
)

func TestCompletionScripts(t *testing.T) {
	for shell, want := range map[string]string{
		"bash": "__start_caravan", "zsh": "#compdef caravan", "fish": "complete -c caravan", "powershell": "Register-ArgumentCompleter -CommandName 'caravan'",
	} {
		t.Run(shell, func(t *testing.T) {
			var out bytes.Buffer
			streams := genericiooptions.IOStreams{Out: &out, ErrOut: &out}
			root := &cobra.Command{Use: "caravan", SilenceErrors: true, SilenceUsage: true}
			kube := cmdutil.NewKubeFlags()
			root.AddCommand(newCmdCompletion(kube, streams), observecmd.NewCmdGet(kube, streams))
			root.SetArgs([]string{"completion", shell})
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), want) {
				t.Fatalf("no %q in the %s script", want, shell)
			}
		})
	}
}

func TestCompletionRefusesOtherShells(t *testing.T) {
	root := &cobra.Command{Use: "caravan", SilenceErrors: true, SilenceUsage: true}
	root.AddCommand(newCmdCompletion(cmdutil.NewKubeFlags(), genericiooptions.NewTestIOStreamsDiscard()))
	root.SetArgs([]string{"completion", "tcsh"})
	if err := root.Execute(); err == nil {
		t.Fatal("tcsh is accepted")
	}
}

func TestGetCompletesResourceTypes(t *testing.T) {
	got, _ := observecmd.CompleteGetArgs(cmdutil.NewKubeFlags())(&cobra.Command{}, nil, "")
	if strings.Join(got, " ") != "integrations pipes kameletbindings kamelets integrationkits builds integrationplatforms" {
		t.Fatalf("got %v", got)
	}
}

func TestCompletionOffersOperatorIDsIntegrationsAndNamespaces(t *testing.T) {
	ns := clitest.Cluster(t).Namespace(t)
	clitest.Create(t, clitest.AssignedIntegration(ns, "orders", "op-a"), clitest.RegisteredOperator("op-complete", time.Now()))
	kubeconfig := clitest.Cluster(t).Kubeconfig(t, "admin", "system:masters")
	complete := func(args ...string) string {
		var out bytes.Buffer
		root := NewRootCommand(genericiooptions.IOStreams{Out: &out, ErrOut: &bytes.Buffer{}})
		root.SetArgs(append([]string{"__complete", "--kubeconfig", kubeconfig, "-n", ns}, args...))
		if err := root.Execute(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out.String()
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"logs", ""}, "orders\n"},
		{[]string{"delete", ""}, "orders\n"},
		{[]string{"reassign", "--to", ""}, "op-complete\n"},
		{[]string{"uninstall", "-x", ""}, "op-complete\n"},
		{[]string{"run", "-x", ""}, "op-complete\n"},
		{[]string{"get", "-n", ""}, ns + "\n"},
		{[]string{"get", "--context", ""}, localcluster.ContextName + "\n"},
		{[]string{"get", "--user", ""}, "admin\n"},
		{[]string{"run", "route.yaml", "-t", "contai"}, "container.\n"},
		{[]string{"bind", "a", "b", "-t", "jvm.debugA"}, "jvm.debugAddress=\n"},
	} {
		if got := complete(tc.args...); !strings.Contains(got, tc.want) {
			t.Errorf("%v: %q lacks %q", tc.args, got, tc.want)
		}
	}
}
