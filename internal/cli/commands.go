package cli

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/caravan-dev/caravan/internal/cli/local"
	"github.com/caravan-dev/caravan/internal/cli/operatorcmd"
)

// commands are every command of the caravan CLI.
func commands(kube *KubeFlags, streams genericiooptions.IOStreams) []*cobra.Command {
	return []*cobra.Command{
		local.NewCmdLocal(streams),
		operatorcmd.NewCmd(kube, streams),
		operatorcmd.NewFleetCmd(kube, streams),
		newCmdRun(kube, streams),
		newCmdBind(kube, streams),
		newCmdDelete(kube, streams),
		newCmdReset(kube, streams),
		newCmdDump(kube, streams),
		newCmdKit(kube, streams),
		newCmdRebuild(kube, streams),
		newCmdDeploy(kube, streams),
		newCmdUndeploy(kube, streams),
		newCmdPromote(kube, streams),
		newCmdLogs(kube, streams),
		newCmdReassign(kube, streams),
		newCmdGrant(kube, streams),
		newCmdInstall(kube, streams),
		newCmdUninstall(kube, streams),
		newCmdUpgrade(kube, streams),
		newCmdGet(kube, streams),
		newCmdDescribe(kube, streams),
		newCmdOperators(kube, streams),
		newCmdCompletion(kube, streams),
		newCmdVersion(kube, streams),
		newCmdBench(kube, streams),
		newCmdImage(kube, streams),
	}
}
