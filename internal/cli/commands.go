package cli

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/cli/installcmd"
	"github.com/caravan-dev/caravan/internal/cli/local"
	"github.com/caravan-dev/caravan/internal/cli/movecmd"
	"github.com/caravan-dev/caravan/internal/cli/observecmd"
	"github.com/caravan-dev/caravan/internal/cli/runcmd"
	"github.com/caravan-dev/caravan/internal/operatorcmd"
)

// commandGroups are the commands of the caravan CLI under the headings the root's help lists them
// by, as kubectl's help groups its commands; the root's help lists the rest under "Other Commands".
func commandGroups(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) templates.CommandGroups {
	return templates.CommandGroups{{
		Message: "Basic Commands:",
		Commands: []*cobra.Command{
			runcmd.NewCmdRun(kube, streams),
			runcmd.NewCmdBind(kube, streams),
			observecmd.NewCmdGet(kube, streams),
			runcmd.NewCmdDelete(kube, streams),
		},
	}, {
		Message: "Deploy Commands:",
		Commands: []*cobra.Command{
			runcmd.NewCmdRebuild(kube, streams),
			runcmd.NewCmdDeploy(kube, streams),
			runcmd.NewCmdUndeploy(kube, streams),
			runcmd.NewCmdPromote(kube, streams),
			runcmd.NewCmdKit(kube, streams),
			runcmd.NewCmdReset(kube, streams),
		},
	}, {
		Message: "Troubleshooting and Debugging Commands:",
		Commands: []*cobra.Command{
			observecmd.NewCmdDescribe(kube, streams),
			observecmd.NewCmdLogs(kube, streams),
			observecmd.NewCmdDump(kube, streams),
		},
	}, {
		Message: "Operator Management Commands:",
		Commands: []*cobra.Command{
			installcmd.NewCmdInstall(kube, streams),
			installcmd.NewCmdUpgrade(kube, streams),
			installcmd.NewCmdUninstall(kube, streams),
			installcmd.NewCmdGrant(kube, streams),
			observecmd.NewCmdOperators(kube, streams),
			movecmd.NewCmdReassign(kube, streams),
			movecmd.NewCmdMigrate(kube, streams),
			installcmd.NewCmdImage(kube, streams),
		},
	}, {
		Message: "Local Cluster Commands:",
		Commands: []*cobra.Command{
			local.NewCmdLocal(streams),
			newCmdBench(kube, streams),
		},
	}}
}

// otherCommands are the commands of the caravan CLI outside commandGroups: the hidden ones that
// operator pods run, and those kubectl's help also lists under "Other Commands".
func otherCommands(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) []*cobra.Command {
	return []*cobra.Command{
		operatorcmd.NewCmd(kube, streams.ErrOut),
		operatorcmd.NewFleetCmd(kube, streams.ErrOut),
		newCmdCompletion(kube, streams),
		observecmd.NewCmdVersion(kube, streams),
		newCmdOptions(streams),
	}
}
