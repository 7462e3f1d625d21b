package runcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
)

// PhaseRequestOptions are the options of `caravan deploy` and `caravan
// undeploy`. They ask the operator of an integration that does not run
// after its build (camel.apache.org/dont-run-after-build=true) to deploy
// or undeploy it, by writing the phase in its status as Camel K's kamel
// deploy and kamel undeploy do.
type PhaseRequestOptions struct {
	selectionCommand
	// from are the phases the request may be made in; to is the phase
	// that makes it.
	from []camelv1.IntegrationPhase
	to   camelv1.IntegrationPhase
	verb string
}

// deployRequestOptions asks for a deploy of a Build Complete integration.
func deployRequestOptions() *PhaseRequestOptions {
	return &PhaseRequestOptions{from: []camelv1.IntegrationPhase{camelv1.IntegrationPhaseBuildComplete},
		to: camelv1.IntegrationPhaseDeploying, verb: "deploy"}
}

// undeployRequestOptions asks for an undeploy of an integration that
// runs or is being deployed.
func undeployRequestOptions() *PhaseRequestOptions {
	return &PhaseRequestOptions{from: []camelv1.IntegrationPhase{camelv1.IntegrationPhaseRunning, camelv1.IntegrationPhaseDeploying},
		to: camelv1.IntegrationPhaseUndeploying, verb: "undeploy"}
}

// NewCmdDeploy builds `caravan deploy`, which deploys integrations built and held.
func NewCmdDeploy(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := deployRequestOptions()
	o.selectionCommand = selectionCommand{Cluster: cmdutil.Cluster{Kube: kube}, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "deploy NAME... | --all",
		Short: "Deploy integrations that were built without running",
		Long: `Deploy integrations that were built without running: those annotated with
` + camelv1.DontRunAfterBuildAnnotation + `=true (caravan run --dont-run-after-build), in phase Build Complete.

The request is the phase Deploying, written in the integration's status, as kamel
deploy writes it; the operator the integration is assigned to then deploys it.
A deployed integration stays deployed, and rolls with its spec, until it is
undeployed. Pipes are deployed by the name of the Integration they generate,
which is theirs.`,
		Example: `  # Build an integration without running it, then deploy it
  caravan run routes.yaml --dont-run-after-build --wait
  caravan deploy routes

  # Deploy every built integration of the operator tenant-a in the namespace apps
  caravan deploy --all -x tenant-a -n apps`,
	}
	return o.bind(cmd, "deploy", o)
}

// NewCmdUndeploy builds `caravan undeploy`, which stops integrations and keeps them built.
func NewCmdUndeploy(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := undeployRequestOptions()
	o.selectionCommand = selectionCommand{Cluster: cmdutil.Cluster{Kube: kube}, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "undeploy NAME... | --all",
		Short: "Undeploy integrations that were deployed with caravan deploy",
		Long: `Undeploy integrations annotated with ` + camelv1.DontRunAfterBuildAnnotation + `=true
that run or are being deployed: the operator removes their Deployment, Service and
ConfigMap, keeps their kit, and returns them to phase Build Complete, from which
caravan deploy deploys them again.

The request is the phase Undeploying, written in the integration's status. An
integration without the annotation is refused: delete it instead, or annotate it.`,
		Example: `  # Stop an integration without deleting it
  caravan undeploy routes`,
	}
	return o.bind(cmd, "undeploy", o)
}

// Run writes the request of every selected integration, then reports the
// ones that were missing, refused or failed.
func (o *PhaseRequestOptions) Run(ctx context.Context) error {
	return o.each(ctx, o.verb, func(it *camelv1.Integration) error {
		if err := o.request(ctx, it); err != nil {
			return fmt.Errorf("integration %q: %w", it.Name, err)
		}
		fmt.Fprintf(o.Out, "integration %q: %s requested; %s\n", it.Name, o.verb, o.next(it))
		return nil
	})
}

// next says who acts on the request.
func (o *PhaseRequestOptions) next(it *camelv1.Integration) string {
	if id := it.OperatorID(); id != "" {
		return fmt.Sprintf("operator %q acts on it", id)
	}
	return "the operator that adopts it acts on it"
}

// request writes the phase with a patch of the status subresource. The
// patch carries the resourceVersion read, so that it is judged against
// the status it was checked on; on a conflict it reads and checks
// again.
func (o *PhaseRequestOptions) request(ctx context.Context, it *camelv1.Integration) error {
	return o.retryOnConflict(ctx, o.Client, it, func() error {
		if err := o.check(it); err != nil {
			return err
		}
		before := it.DeepCopy()
		it.Status.Phase = o.to
		return o.Client.Status().Patch(ctx, it, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	})
}

// check refuses an integration the request does not apply to, saying why.
func (o *PhaseRequestOptions) check(it *camelv1.Integration) error {
	if it.Annotations[camelv1.DontRunAfterBuildAnnotation] != "true" {
		return fmt.Errorf("it is not annotated with %s=true, so it runs once built and is not %sed on request: "+
			"annotate it (caravan run --dont-run-after-build)%s", camelv1.DontRunAfterBuildAnnotation, o.verb, o.otherwise())
	}
	for _, p := range o.from {
		if it.Status.Phase == p {
			return nil
		}
	}
	return fmt.Errorf("it is in phase %q, and only an integration in phase %s can be %sed", it.Status.Phase, phaseList(o.from), o.verb)
}

func (o *PhaseRequestOptions) otherwise() string {
	if o.to == camelv1.IntegrationPhaseUndeploying {
		return ", or delete it to stop it"
	}
	return ""
}

func phaseList(phases []camelv1.IntegrationPhase) string {
	s := ""
	for i, p := range phases {
		switch {
		case i == 0:
		case i == len(phases)-1:
			s += " or "
		default:
			s += ", "
		}
		s += fmt.Sprintf("%q", p)
	}
	return s
}
