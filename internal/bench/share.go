package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/bench/result"
)

const shareNamespace = "bench-share"

// heapWait bounds the wait for an idle operator's next garbage collection
// (the runtime forces one every two minutes).
const heapWait = 150 * time.Second

// runShare runs n integrations split between two operators, measures
// their steady-state heaps and an idle third operator's, then moves all
// to the third and measures it again. The integrations run zero replicas:
// an operator caches no pods, so its heap does not depend on them, and
// the cluster is spared n pods.
func runShare(ctx context.Context, e *env, n int, split [2]int) (*result.Share, error) {
	res := &result.Share{Integrations: n, Split: split}
	if err := e.createNamespace(ctx, shareNamespace); err != nil {
		return nil, err
	}
	fmt.Fprintln(e.progress, "share: starting share-a, share-b and share-all")
	ops, err := e.startOperators(ctx, nil, "share-a", "share-b", "share-all")
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, op := range ops {
			op.stop()
		}
	}()
	a, b, all := ops[0], ops[1], ops[2]
	small := n * split[0] / 100
	objs := make([]client.Object, n)
	for i := range objs {
		owner := b.ID
		if i < small {
			owner = a.ID
		}
		objs[i] = newIntegration(shareNamespace, fmt.Sprintf("share-%05d", i), owner, 0, Image)
	}
	w, err := measure.NewWatcher(ctx, e.config, shareNamespace, &camelv1.Integration{}, &appsv1.Deployment{})
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	ready, err := w.Track(ctx, w.IntegrationReady(shareNamespace), nil)
	if err != nil {
		return nil, err
	}
	ready.Sweep = measure.ReadyIntegrations(e.client, shareNamespace)
	fmt.Fprintf(e.progress, "share: %d integrations, %d on %s and %d on %s\n", n, small, a.ID, n-small, b.ID)
	if err := createAll(ctx, e.client, objs); err != nil {
		return nil, err
	}
	err = ready.Wait(ctx, n, "the integrations", e.report("Ready"))
	ready.WarnMissed(e.progress, "integrations")
	ready.Stop()
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(e.progress, "share: waiting for each operator's heap to settle (up to 2.5 min)")
	heaps, err := steadyHeaps(ctx, a, b, all)
	if err != nil {
		return nil, err
	}
	res.Operators = []result.ShareHeap{
		{ID: a.ID, Owned: small, HeapMiB: heaps[0] / measure.MiB},
		{ID: b.ID, Owned: n - small, HeapMiB: heaps[1] / measure.MiB},
	}
	res.IdleHeapMiB = measure.Round3(heaps[2] / measure.MiB)

	fmt.Fprintf(e.progress, "share: moving all to %s\n", all.ID)
	moved, err := w.Track(ctx, w.RunningUnder(shareNamespace, all.ID), nil)
	if err != nil {
		return nil, err
	}
	defer moved.Stop()
	err = parallel(ctx, n, func(ctx context.Context, i int) error {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, camelv1.OperatorIDAnnotation, all.ID)
		return e.client.Patch(ctx, objs[i], client.RawPatch(types.MergePatchType, []byte(patch)))
	})
	if err != nil {
		return nil, err
	}
	if err := moved.Wait(ctx, n, "the moves", e.report("moved")); err != nil {
		return nil, err
	}
	heaps, err = steadyHeaps(ctx, all)
	if err != nil {
		return nil, err
	}
	res.Operators = append(res.Operators, result.ShareHeap{ID: all.ID, Owned: n, HeapMiB: heaps[0] / measure.MiB})
	for i := range res.Operators {
		res.Operators[i].HeapMiB = measure.Round3(res.Operators[i].HeapMiB)
	}
	allHeap := res.Operators[2].HeapMiB
	res.SmallOverAll = measure.Round3(measure.Ratio(res.Operators[0].HeapMiB, allHeap))
	res.KiBPerIntegration = measure.Round3((allHeap - res.IdleHeapMiB) * 1024 / float64(n))
	fmt.Fprintln(e.progress, "share: deleting the integrations")
	return res, e.deleteNamespace(ctx, shareNamespace)
}

// steadyHeaps measures the operators' steady-state heaps at once.
func steadyHeaps(ctx context.Context, ops ...*Operator) ([]float64, error) {
	out := make([]float64, len(ops))
	errs := make([]error, len(ops))
	var wg sync.WaitGroup
	for i, op := range ops {
		wg.Go(func() { out[i], errs[i] = op.steadyHeap(ctx, heapWait) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
