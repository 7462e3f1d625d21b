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
)

const shareNamespace = "bench-share"

// ShareResult holds the share scenario's figures.
type ShareResult struct {
	Integrations int    `json:"integrations"`
	Split        [2]int `json:"split"`
	// Operators are the two sharing operators, then the one that owns
	// all after the reassignment.
	Operators   []ShareHeap `json:"operators"`
	IdleHeapMiB float64     `json:"idleHeapMiB"`
	// SmallOverAll is the heap of the operator with the smaller share
	// over the heap of the one owning all.
	SmallOverAll float64 `json:"smallOverAll"`
	// KiBPerIntegration is (heap owning all - idle heap) / integrations.
	KiBPerIntegration float64 `json:"kibPerIntegration"`
}

// ShareHeap is one operator's steady-state heap with its share.
type ShareHeap struct {
	ID      string  `json:"id"`
	Owned   int     `json:"owned"`
	HeapMiB float64 `json:"heapMiB"`
}

// heapWait bounds the wait for an idle operator's next garbage collection
// (the runtime forces one every two minutes).
const heapWait = 150 * time.Second

// runShare runs n integrations split between two operators, measures
// their steady-state heaps and an idle third operator's, then moves all
// to the third and measures it again. The integrations run zero replicas:
// an operator caches no pods, so its heap does not depend on them, and
// the cluster is spared n pods.
func runShare(ctx context.Context, e *env, n int, split [2]int) (*ShareResult, error) {
	res := &ShareResult{Integrations: n, Split: split}
	if err := e.createNamespace(ctx, shareNamespace); err != nil {
		return nil, err
	}
	fmt.Fprintln(e.progress, "share: starting share-a, share-b and share-all")
	ops, err := e.startOperators(ctx, "share-a", "share-b", "share-all")
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
	w, err := newWatcher(ctx, e.config, shareNamespace, &camelv1.Integration{}, &appsv1.Deployment{})
	if err != nil {
		return nil, err
	}
	defer w.stop()
	ready, err := w.track(ctx, w.integrationReady(shareNamespace), nil)
	if err != nil {
		return nil, err
	}
	ready.sweep = readyIntegrations(e.client, shareNamespace)
	fmt.Fprintf(e.progress, "share: %d integrations, %d on %s and %d on %s\n", n, small, a.ID, n-small, b.ID)
	if err := createAll(ctx, e.client, objs); err != nil {
		return nil, err
	}
	err = ready.wait(ctx, n, "the integrations", e.report("Ready"))
	ready.warnMissed(e.progress, "integrations")
	ready.stop()
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(e.progress, "share: waiting for each operator's heap to settle (up to 2.5 min)")
	heaps, err := steadyHeaps(ctx, a, b, all)
	if err != nil {
		return nil, err
	}
	res.Operators = []ShareHeap{{a.ID, small, heaps[0] / mib}, {b.ID, n - small, heaps[1] / mib}}
	res.IdleHeapMiB = round3(heaps[2] / mib)

	fmt.Fprintf(e.progress, "share: moving all to %s\n", all.ID)
	moved, err := w.track(ctx, w.runningUnder(shareNamespace, all.ID), nil)
	if err != nil {
		return nil, err
	}
	defer moved.stop()
	err = parallel(ctx, n, func(ctx context.Context, i int) error {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, camelv1.OperatorIDAnnotation, all.ID)
		return e.client.Patch(ctx, objs[i], client.RawPatch(types.MergePatchType, []byte(patch)))
	})
	if err != nil {
		return nil, err
	}
	if err := moved.wait(ctx, n, "the moves", e.report("moved")); err != nil {
		return nil, err
	}
	heaps, err = steadyHeaps(ctx, all)
	if err != nil {
		return nil, err
	}
	res.Operators = append(res.Operators, ShareHeap{all.ID, n, heaps[0] / mib})
	for i := range res.Operators {
		res.Operators[i].HeapMiB = round3(res.Operators[i].HeapMiB)
	}
	allHeap := res.Operators[2].HeapMiB
	res.SmallOverAll = round3(ratio(res.Operators[0].HeapMiB, allHeap))
	res.KiBPerIntegration = round3((allHeap - res.IdleHeapMiB) * 1024 / float64(n))
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
