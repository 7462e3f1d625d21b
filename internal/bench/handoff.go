package bench

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/bench/result"
)

const (
	handoffNamespace = "bench-handoff"
	settle           = 15 * time.Second
)

// runHandoff runs n integrations with replicas pods on from, then moves
// them all to to in one burst of annotation patches.
func runHandoff(ctx context.Context, e *env, from, to *Operator, n int, replicas int32) (*result.Handoff, error) {
	floor, err := runHandoffFloor(ctx, e, n, replicas)
	if err != nil {
		return nil, err
	}
	if err := e.createNamespace(ctx, handoffNamespace); err != nil {
		return nil, err
	}
	w, err := measure.NewWatcher(ctx, e.config, handoffNamespace, &camelv1.Integration{}, &appsv1.Deployment{}, &corev1.Pod{})
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	objs := make([]client.Object, n)
	for i := range objs {
		objs[i] = newIntegration(handoffNamespace, fmt.Sprintf("mover-%04d", i), from.ID, replicas, Image)
	}
	fmt.Fprintf(e.progress, "hand-off: %d integrations with %d replicas on %s\n", n, replicas, from.ID)
	running, err := w.Track(ctx, w.RunningUnder(handoffNamespace, from.ID), nil)
	if err != nil {
		return nil, err
	}
	if err := createAll(ctx, e.client, objs); err != nil {
		return nil, err
	}
	err = running.Wait(ctx, n, "the integrations to run", e.report("running"))
	running.Stop()
	if err != nil {
		return nil, err
	}
	res, err := moveAll(ctx, e, w, handoffNamespace, from, to, objs, replicas)
	if err != nil {
		return nil, err
	}
	res.FloorMoveTimes, res.FloorMoveSeconds = floor, measure.Summarize(floor)
	res.P99Ratio = measure.Round3(measure.Ratio(res.MoveSeconds.P99, res.FloorMoveSeconds.P99))
	fmt.Fprintf(e.progress, "hand-off: p99 %.2fs; deleting the integrations\n", res.MoveSeconds.P99)
	return res, e.deleteNamespace(ctx, handoffNamespace)
}

// moveAll moves objs from from to to in one burst of annotation patches,
// and returns how the moves went. objs are Running on from with replicas
// pods each in namespace, whose Integrations, Deployments and Pods w
// watches.
func moveAll(ctx context.Context, e *env, w *measure.Watcher, namespace string, from, to *Operator, objs []client.Object, replicas int32) (*result.Handoff, error) {
	n := len(objs)
	res := &result.Handoff{Integrations: n, Replicas: replicas, From: from.ID, To: to.ID,
		SettleSeconds: settle.Seconds(), MinReadyPods: replicas}
	idleBefore, err := from.Scrape(ctx)
	if err != nil {
		return nil, err
	}
	sleep(ctx, settle)
	idleAfter, err := from.Scrape(ctx)
	if err != nil {
		return nil, err
	}
	res.FromWritesIdle = measure.CountersOf(idleAfter).Minus(measure.CountersOf(idleBefore)).Writes

	pods, err := measure.NewPodWatch(ctx, w, namespace)
	if err != nil {
		return nil, err
	}
	moved, err := w.Track(ctx, w.RunningUnder(namespace, to.ID), pods.Observe)
	if err != nil {
		return nil, err
	}
	defer moved.Stop()
	adopted, err := w.Track(ctx, w.OwnedBy(namespace, to.ID), nil)
	if err != nil {
		return nil, err
	}
	defer adopted.Stop()
	patchedAt := make([]time.Time, n)
	fmt.Fprintf(e.progress, "moving %d integrations from %s to %s in one burst\n", n, from.ID, to.ID)
	start := time.Now()
	err = parallel(ctx, n, func(ctx context.Context, i int) error {
		patchedAt[i] = time.Now()
		return assign(ctx, e.client, objs[i], to.ID)
	})
	if err != nil {
		return nil, fmt.Errorf("moving the integrations: %w", err)
	}
	if err := moved.Wait(ctx, n, "the moves", e.report("moved")); err != nil {
		return nil, err
	}
	done, owned := moved.Times(), adopted.Times()
	var adoptTimes []float64
	for i, obj := range objs {
		res.MoveTimes = append(res.MoveTimes, measure.Round3(done[obj.GetName()].Sub(patchedAt[i]).Seconds()))
		if at, ok := owned[obj.GetName()]; ok {
			adoptTimes = append(adoptTimes, measure.Round3(at.Sub(patchedAt[i]).Seconds()))
		}
	}
	res.MoveSeconds, res.AdoptSeconds = measure.Summarize(res.MoveTimes), measure.Summarize(adoptTimes)
	res.TotalSeconds = measure.Round3(moved.Last().Sub(start).Seconds())

	if err := measureFromWrites(ctx, e, namespace, from, objs, patchedAt, res); err != nil {
		return nil, err
	}
	res.MinReadyPods, res.PodsStarted = min(res.MinReadyPods, pods.Minimum()), pods.Started()
	return res, nil
}

// measureFromWrites counts the old owner's writes after the moves: over
// a settling period, from its metrics, and per moved integration, from
// the audit log.
func measureFromWrites(ctx context.Context, e *env, namespace string, from *Operator, objs []client.Object, patchedAt []time.Time, res *result.Handoff) error {
	before, err := from.Scrape(ctx)
	if err != nil {
		return err
	}
	sleep(ctx, settle)
	after, err := from.Scrape(ctx)
	if err != nil {
		return err
	}
	res.FromWritesSettled = measure.CountersOf(after).Minus(measure.CountersOf(before)).Writes
	patched := map[string]time.Time{}
	for i, obj := range objs {
		patched[obj.GetName()] = patchedAt[i]
	}
	writes, err := measure.WritesAfter(e.cluster.AuditLogPath(), from.User, namespace, patched)
	if err != nil {
		return err
	}
	res.ReleaseWrites, res.WritesByFromAfterReleaseByKind = writes.Release, writes.Beyond
	for _, n := range writes.Beyond {
		res.WritesByFromAfterRelease += n
	}
	return nil
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
