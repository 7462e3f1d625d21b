package cli

import (
	"fmt"
	"maps"
	"slices"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/trait"
)

func newCmdCompletion(_ *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print the shell completion script for bash, zsh, fish or PowerShell",
		Long: `Print the shell completion script for bash, zsh, fish or PowerShell. Completion covers
commands and flags, resource types, -t's trait names and properties, the
kubeconfig's contexts, clusters and users, and, by asking the cluster, resource
names, namespaces and operator ids.`,
		Example: `  # Load completion in the current bash session (needs bash-completion)
  source <(caravan completion bash)

  # Install it for zsh
  caravan completion zsh > "${fpath[1]}/_caravan"

  # Install it for fish
  caravan completion fish > ~/.config/fish/completions/caravan.fish

  # Load it in the current PowerShell session
  caravan completion powershell | Out-String | Invoke-Expression`,
		ValidArgs:             []string{"bash", "zsh", "fish", "powershell"},
		Args:                  cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(streams.Out, true)
			case "zsh":
				return root.GenZshCompletion(streams.Out)
			case "fish":
				return root.GenFishCompletion(streams.Out, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(streams.Out)
			}
			return fmt.Errorf("unsupported shell %q: use bash, zsh, fish or powershell", args[0])
		},
	}
}

// integrationCommands take integration names as arguments.
var integrationCommands = []string{"logs", "delete", "rebuild", "promote", "deploy", "undeploy"}

// registerCompletions adds the cluster's completions to every command of root.
// They are the operator ids that -x, --from and --to take, the integration names of the
// commands that take them (unless a command completes them already), -n's namespaces, the
// kubeconfig's contexts, clusters and users, and the trait settings of -t.
func registerCompletions(root *cobra.Command, kube *cmdutil.KubeFlags) {
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		if cmd.Flags().Lookup("trait") != nil {
			_ = cmd.RegisterFlagCompletionFunc("trait", func(_ *cobra.Command, _ []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
				return trait.Complete(typed), cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
			})
		}
		for _, name := range []string{"operator-id", "from", "to"} {
			if cmd.Flags().Lookup(name) == nil {
				continue
			}
			if _, ok := cmd.GetFlagCompletionFunc(name); !ok {
				_ = cmd.RegisterFlagCompletionFunc(name, cmdutil.CompleteOperatorIDs(kube))
			}
		}
		if slices.Contains(integrationCommands, cmd.Name()) && cmd.ValidArgsFunction == nil && cmd.Parent() == root {
			cmd.ValidArgsFunction = func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
				return cmdutil.CompleteNames(cmd.Context(), kube, &camelv1.IntegrationList{}, true), cobra.ShellCompDirectiveNoFileComp
			}
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
	_ = root.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return cmdutil.CompleteNames(cmd.Context(), kube, &corev1.NamespaceList{}, false), cobra.ShellCompDirectiveNoFileComp
	})
	kubeconfigNames := func(names func(clientcmdapi.Config) []string) cobra.CompletionFunc {
		return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			raw, err := kube.ToRawKubeConfigLoader().RawConfig()
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return slices.Sorted(slices.Values(names(raw))), cobra.ShellCompDirectiveNoFileComp
		}
	}
	_ = root.RegisterFlagCompletionFunc("context", kubeconfigNames(func(c clientcmdapi.Config) []string { return slices.Collect(maps.Keys(c.Contexts)) }))
	_ = root.RegisterFlagCompletionFunc("cluster", kubeconfigNames(func(c clientcmdapi.Config) []string { return slices.Collect(maps.Keys(c.Clusters)) }))
	_ = root.RegisterFlagCompletionFunc("user", kubeconfigNames(func(c clientcmdapi.Config) []string { return slices.Collect(maps.Keys(c.AuthInfos)) }))
}
