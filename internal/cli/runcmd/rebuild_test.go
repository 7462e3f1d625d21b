package runcmd

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/cli/clitest"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
)

func TestRebuildClearsTheDigestAndWakesTheOperator(t *testing.T) {
	ns := clitest.Cluster(t).Namespace(t)
	it := clitest.AssignedIntegration(ns, "a1", "op-a")
	it.Status.Digest = "v1-abc"
	it.Status.Phase = camelv1.IntegrationPhaseRunning
	clitest.Create(t, it, clitest.AssignedIntegration(ns, "b1", "op-b"))
	c := clitest.Cluster(t).Client
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := &RebuildOptions{selectionCommand: selectionCommand{integrationSelection: integrationSelection{All: true, OperatorID: "op-a"},
		Cluster: cmdutil.Cluster{Namespace: ns, Client: c}, IOStreams: streams}, now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out.String() != "integration \"a1\": digest cleared; operator \"op-a\" re-initialises it\n" {
		t.Fatalf("got output %q", out.String())
	}
	got := &camelv1.Integration{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(it), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Digest != "" || got.Status.Phase != camelv1.IntegrationPhaseRunning {
		t.Fatalf("status: digest %q, phase %q", got.Status.Digest, got.Status.Phase)
	}
	if got.Annotations[RebuildRequestedAnnotation] != "2026-01-02T03:04:05Z" || got.Annotations[camelv1.OperatorIDAnnotation] != "op-a" {
		t.Fatalf("annotations: %v", got.Annotations)
	}
	other := &camelv1.Integration{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "b1"}, other); err != nil {
		t.Fatal(err)
	}
	if _, touched := other.Annotations[RebuildRequestedAnnotation]; touched {
		t.Fatal("the integration of another operator was rebuilt")
	}
	o.integrationSelection = integrationSelection{Names: []string{"nope"}}
	if err := o.Run(context.Background()); err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`not found in namespace %s: "nope"`, ns)) {
		t.Fatalf("a missing integration: got %v", err)
	}
}
