//go:build operatorimage

package cli

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// commands are the commands of the operator image's binary: the operator
// and its version, nothing an operator never runs.
func commands(kube *KubeFlags, streams genericiooptions.IOStreams) []*cobra.Command {
	return []*cobra.Command{
		newCmdOperator(kube, streams),
		newCmdVersion(kube, streams),
	}
}
