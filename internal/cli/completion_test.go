package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func TestCompletionScripts(t *testing.T) {
	for shell, want := range map[string]string{
		"bash": "__start_caravan", "zsh": "#compdef caravan", "fish": "complete -c caravan", "powershell": "Register-ArgumentCompleter -CommandName 'caravan'",
	} {
		t.Run(shell, func(t *testing.T) {
			var out bytes.Buffer
			streams := genericiooptions.IOStreams{Out: &out, ErrOut: &out}
			root := &cobra.Command{Use: "caravan", SilenceErrors: true, SilenceUsage: true}
			kube := NewKubeFlags()
			root.AddCommand(newCmdCompletion(kube, streams), newCmdGet(kube, streams))
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
	root.AddCommand(newCmdCompletion(NewKubeFlags(), genericiooptions.NewTestIOStreamsDiscard()))
	root.SetArgs([]string{"completion", "tcsh"})
	if err := root.Execute(); err == nil {
		t.Fatal("tcsh is accepted")
	}
}

func TestGetCompletesResourceTypes(t *testing.T) {
	got, _ := completeGetArgs(NewKubeFlags())(&cobra.Command{}, nil, "")
	if strings.Join(got, " ") != "integrations pipes integrationkits builds integrationplatforms" {
		t.Fatalf("got %v", got)
	}
}
