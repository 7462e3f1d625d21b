package bench

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/bench/result"
	"github.com/caravan-dev/caravan/internal/operatorpod"
)

const recoveryNamespace = "bench-recovery"

// runRecovery creates n integrations for op in one burst, and deletes
// op's pod at once when half of them are created. The delete has no grace
// period: its process is killed, as a crash would. The other half is
// created while it is down. The Deployment starts another pod; the figure is the time
// from the kill to all n Ready, and every integration must have exactly
// one Deployment.
func runRecovery(ctx context.Context, e *env, op *Operator, n int) (*result.Recovery, error) {
	res := &result.Recovery{Integrations: n, Operator: op.ID}
	if err := e.createNamespace(ctx, recoveryNamespace); err != nil {
		return nil, err
	}
	t, _, stopTracking, err := e.trackRollout(ctx, recoveryNamespace)
	if err != nil {
		return nil, err
	}
	defer stopTracking()
	objs := make([]client.Object, n)
	for i := range objs {
		objs[i] = newIntegration(recoveryNamespace, fmt.Sprintf("recovery-%05d", i), op.ID, 1, Image)
	}
	fmt.Fprintf(e.progress, "recovery: %d integrations for %s; its pod is killed when half are created\n", n, op.ID)
	pods, err := operatorpod.List(ctx, e.client, operatorNamespace, op.ID)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := createAll(ctx, e.client, objs[:n/2]); err != nil {
		return nil, err
	}
	killed := time.Now()
	res.ReadyAtKill = len(t.Times())
	res.KilledAfterSeconds = measure.Round3(killed.Sub(start).Seconds())
	for i := range pods {
		if err := e.client.Delete(ctx, &pods[i], client.GracePeriodSeconds(0)); err != nil {
			return nil, fmt.Errorf("killing the pod of operator %s: %w", op.ID, err)
		}
	}
	if err := createAll(ctx, e.client, objs[n/2:]); err != nil {
		return nil, err
	}
	if err := t.Wait(ctx, n, "the integrations", e.report("Ready")); err != nil {
		return nil, err
	}
	res.RecoverySeconds = measure.Round3(t.Last().Sub(killed).Seconds())
	if err := op.waitReady(ctx, 2*time.Minute); err != nil {
		return nil, err
	}
	deployments := &appsv1.DeploymentList{}
	if err := e.client.List(ctx, deployments, client.InNamespace(recoveryNamespace)); err != nil {
		return nil, err
	}
	res.Deployments = len(deployments.Items)
	if res.Deployments != n {
		return res, fmt.Errorf("recovery: %d Deployments for %d integrations", res.Deployments, n)
	}
	fmt.Fprintf(e.progress, "recovery: all Ready %.1fs after the kill; deleting them\n", res.RecoverySeconds)
	return res, e.deleteNamespace(ctx, recoveryNamespace)
}
