package bench

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/bench/measure"
)

const (
	handoffFloorNamespace = "bench-handoff-floor"
	// floorMovedID is the operator id the hand-off floor's Deployments
	// are relabelled with, as a move relabels an integration's Deployment.
	floorMovedID = "bench-floor-moved"
)

// runHandoffFloor measures the least a move can cost. n bare Deployments
// with replicas pods and Caravan's pod template, ready, get the change a
// move makes to an integration's Deployment (its operator-id label; the
// pods are not touched) in one burst of patches. It measures, per
// Deployment, the time from its patch until a watch shows it, rolled out.
func runHandoffFloor(ctx context.Context, e *env, n int, replicas int32) ([]float64, error) {
	if err := e.createNamespace(ctx, handoffFloorNamespace); err != nil {
		return nil, err
	}
	var cms, deps []client.Object
	for i := 0; i < n; i++ {
		it := newIntegration(handoffFloorNamespace, fmt.Sprintf("mover-%04d", i), floorID, replicas, Image)
		cm, dep, err := floorObjects(it)
		if err != nil {
			return nil, err
		}
		cms, deps = append(cms, cm), append(deps, dep)
	}
	w, err := measure.NewWatcher(ctx, e.config, handoffFloorNamespace, &appsv1.Deployment{})
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	fmt.Fprintf(e.progress, "hand-off floor: %d Deployments with %d replicas\n", n, replicas)
	ready, err := w.Track(ctx, w.DeploymentReady(handoffFloorNamespace), nil)
	if err != nil {
		return nil, err
	}
	if err := createAll(ctx, e.client, append(cms, deps...)); err != nil {
		return nil, err
	}
	err = ready.Wait(ctx, n, "the floor's Deployments", e.report("ready"))
	ready.Stop()
	if err != nil {
		return nil, err
	}
	moved, err := w.Track(ctx, w.DeploymentUnder(handoffFloorNamespace, floorMovedID), nil)
	if err != nil {
		return nil, err
	}
	defer moved.Stop()
	fmt.Fprintf(e.progress, "hand-off floor: relabelling them in one burst\n")
	patchedAt := make([]time.Time, n)
	err = parallel(ctx, n, func(ctx context.Context, i int) error {
		d := deps[i].(*appsv1.Deployment)
		patched := d.DeepCopy()
		patched.Labels[camelv1.OperatorIDLabel] = floorMovedID
		patchedAt[i] = time.Now()
		return e.client.Patch(ctx, patched, client.MergeFrom(d))
	})
	if err != nil {
		return nil, fmt.Errorf("relabelling the floor's Deployments: %w", err)
	}
	if err := moved.Wait(ctx, n, "the floor's relabelling", e.report("relabelled")); err != nil {
		return nil, err
	}
	done := moved.Times()
	times := make([]float64, n)
	for i, d := range deps {
		times[i] = measure.Round3(done[d.GetName()].Sub(patchedAt[i]).Seconds())
	}
	fmt.Fprintf(e.progress, "hand-off floor: p99 %.2fs; deleting it\n", measure.Summarize(times).P99)
	return times, e.deleteNamespace(ctx, handoffFloorNamespace)
}
