package cli

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/cli/installcmd"
	"github.com/caravan-dev/caravan/internal/cli/local"
	"github.com/caravan-dev/caravan/internal/cli/movecmd"
	"github.com/caravan-dev/caravan/internal/cli/observecmd"
	"github.com/caravan-dev/caravan/internal/cli/runcmd"
	"github.com/caravan-dev/caravan/internal/operatorcmd"
)

// commands are every command of the caravan CLI.
func commands(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) []*cobra.Command {
	return []*cobra.Command{
		local.NewCmdLocal(streams),
		operatorcmd.NewCmd(kube, streams.ErrOut),
		operatorcmd.NewFleetCmd(kube, streams.ErrOut),
		runcmd.NewCmdRun(kube, streams),
		runcmd.NewCmdBind(kube, streams),
		runcmd.NewCmdDelete(kube, streams),
		runcmd.NewCmdReset(kube, streams),
		observecmd.NewCmdDump(kube, streams),
		runcmd.NewCmdKit(kube, streams),
		runcmd.NewCmdRebuild(kube, streams),
		runcmd.NewCmdDeploy(kube, streams),
		runcmd.NewCmdUndeploy(kube, streams),
		runcmd.NewCmdPromote(kube, streams),
		observecmd.NewCmdLogs(kube, streams),
		movecmd.NewCmdReassign(kube, streams),
		movecmd.NewCmdMigrate(kube, streams),
		installcmd.NewCmdGrant(kube, streams),
		installcmd.NewCmdInstall(kube, streams),
		installcmd.NewCmdUninstall(kube, streams),
		installcmd.NewCmdUpgrade(kube, streams),
		observecmd.NewCmdGet(kube, streams),
		observecmd.NewCmdDescribe(kube, streams),
		observecmd.NewCmdOperators(kube, streams),
		newCmdCompletion(kube, streams),
		observecmd.NewCmdVersion(kube, streams),
		newCmdBench(kube, streams),
		installcmd.NewCmdImage(kube, streams),
	}
}
