package runcmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/cli/clitest"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
)

// held is an integration of operatorID that does not run after its
// build, in phase.
func held(ns, name, operatorID string, phase camelv1.IntegrationPhase) *camelv1.Integration {
	it := clitest.AssignedIntegration(ns, name, operatorID)
	it.Annotations[camelv1.DontRunAfterBuildAnnotation] = "true"
	it.Status.Phase = phase
	return it
}

func TestDeployAndUndeployWriteThePhaseThatKamelWritesAndRefuseTheRest(t *testing.T) {
	ns := clitest.Cluster(t).Namespace(t)
	plain := clitest.AssignedIntegration(ns, "plain", "op-a")
	plain.Status.Phase = camelv1.IntegrationPhaseRunning
	clitest.Create(t, held(ns, "built", "op-a", camelv1.IntegrationPhaseBuildComplete),
		held(ns, "running", "op-a", camelv1.IntegrationPhaseRunning),
		held(ns, "other", "op-b", camelv1.IntegrationPhaseBuildComplete), plain)
	c := clitest.Cluster(t).Client
	phaseOf := func(name string) camelv1.IntegrationPhase {
		it := &camelv1.Integration{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, it); err != nil {
			t.Fatal(err)
		}
		return it.Status.Phase
	}
	command := func(o *PhaseRequestOptions, sel integrationSelection) (*PhaseRequestOptions, *bytes.Buffer) {
		streams, _, out, _ := genericiooptions.NewTestIOStreams()
		o.selectionCommand = selectionCommand{integrationSelection: sel, Cluster: cmdutil.Cluster{Namespace: ns, Client: c}, IOStreams: streams}
		return o, out
	}

	o, out := command(deployRequestOptions(), integrationSelection{All: true, OperatorID: "op-a"})
	err := o.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), `integration "plain": it is not annotated with camel.apache.org/dont-run-after-build=true`) ||
		!strings.Contains(err.Error(), `integration "running": it is in phase "Running", and only an integration in phase "Build Complete" can be deployed`) {
		t.Fatalf("deploy --all -x op-a: got %v", err)
	}
	if out.String() != "integration \"built\": deploy requested; operator \"op-a\" acts on it\n" {
		t.Fatalf("deploy output %q", out.String())
	}
	for name, want := range map[string]camelv1.IntegrationPhase{
		"built": camelv1.IntegrationPhaseDeploying, "running": camelv1.IntegrationPhaseRunning,
		"other": camelv1.IntegrationPhaseBuildComplete, "plain": camelv1.IntegrationPhaseRunning,
	} {
		if got := phaseOf(name); got != want {
			t.Errorf("after deploy, %s is in phase %q, want %q", name, got, want)
		}
	}

	o, out = command(undeployRequestOptions(), integrationSelection{Names: []string{"running", "other"}})
	err = o.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), `integration "other": it is in phase "Build Complete", and only an integration in phase "Running" or "Deploying" can be undeployed`) {
		t.Fatalf("undeploy: got %v", err)
	}
	if out.String() != "integration \"running\": undeploy requested; operator \"op-a\" acts on it\n" || phaseOf("running") != camelv1.IntegrationPhaseUndeploying {
		t.Fatalf("undeploy output %q, phase %q", out.String(), phaseOf("running"))
	}
}
