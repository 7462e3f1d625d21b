package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
)

func newCmdCompletion(_ *KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print the shell completion script for bash, zsh, fish or PowerShell",
		Long: `Print the shell completion script for bash, zsh, fish or PowerShell. Completion covers
commands and flags, resource types, and, by asking the cluster, resource
names and operator ids.`,
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

// completeGetArgs completes the TYPE of `caravan get`, then the names of
// that type in the namespace.
func completeGetArgs(kube *KubeFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) == 0 {
			var types []cobra.Completion
			for _, rt := range resourceTypes() {
				types = append(types, rt.plural)
			}
			return types, cobra.ShellCompDirectiveNoFileComp
		}
		rt, err := lookupResource(args[0])
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeNames(cmd.Context(), kube, rt.newList(), true), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeOperatorIDs completes an operator id from the registered
// IntegrationOperators.
func completeOperatorIDs(kube *KubeFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeNames(cmd.Context(), kube, &camelv1alpha1.IntegrationOperatorList{}, false), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeNames lists the names of the objects of a list type, in the
// namespace of the kube flags when namespaced; errors complete nothing.
func completeNames(ctx context.Context, kube *KubeFlags, list client.ObjectList, namespaced bool) []cobra.Completion {
	if ctx == nil {
		ctx = context.Background()
	}
	c, err := kube.Client()
	if err != nil {
		return nil
	}
	var opts []client.ListOption
	if namespaced {
		ns, err := kube.Namespace()
		if err != nil {
			return nil
		}
		opts = append(opts, client.InNamespace(ns))
	}
	if err := c.List(ctx, list, opts...); err != nil {
		return nil
	}
	objs, err := listItems(list)
	if err != nil {
		return nil
	}
	names := make([]cobra.Completion, 0, len(objs))
	for _, obj := range objs {
		names = append(names, obj.GetName())
	}
	return names
}

// completeDescribeArgs completes the TYPE of `caravan describe`, then a
// name of that type (an operator id for operators).
func completeDescribeArgs(kube *KubeFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		switch len(args) {
		case 0:
			var types []cobra.Completion
			for _, dt := range describeTypes() {
				types = append(types, dt.name)
			}
			return types, cobra.ShellCompDirectiveNoFileComp
		case 1:
			dt, err := lookupDescribeType(strings.ToLower(args[0]))
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return completeNames(cmd.Context(), kube, dt.newList(), dt.namespaced), cobra.ShellCompDirectiveNoFileComp
		default:
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
	}
}

// integrationCommands take integration names as arguments.
var integrationCommands = []string{"logs", "delete", "rebuild", "promote", "deploy", "undeploy"}

// registerCompletions adds the cluster's completions to every command of root.
// They are the operator ids that -x, --from and --to take, the integration names of the
// commands that take them (unless a command completes them already), and -n's namespaces.
func registerCompletions(root *cobra.Command, kube *KubeFlags) {
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, name := range []string{"operator-id", "from", "to"} {
			if cmd.Flags().Lookup(name) == nil {
				continue
			}
			if _, ok := cmd.GetFlagCompletionFunc(name); !ok {
				_ = cmd.RegisterFlagCompletionFunc(name, completeOperatorIDs(kube))
			}
		}
		if slices.Contains(integrationCommands, cmd.Name()) && cmd.ValidArgsFunction == nil && cmd.Parent() == root {
			cmd.ValidArgsFunction = func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
				return completeNames(cmd.Context(), kube, &camelv1.IntegrationList{}, true), cobra.ShellCompDirectiveNoFileComp
			}
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
	_ = root.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeNames(cmd.Context(), kube, &corev1.NamespaceList{}, false), cobra.ShellCompDirectiveNoFileComp
	})
}
