package bench

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/bench/bareoperator"
	"github.com/caravan-dev/caravan/internal/fixture"
)

// Image is the image bench integrations run: the tests' (fixture.Image).
const Image = fixture.Image

// floorID is the operator id the floor's Deployments are labelled with:
// no operator runs with it, so none of them is touched by an operator.
const floorID = "bench-floor"

// workers is how many requests a burst sends at once.
const workers = 50

// prebuilt is a sourceless integration: Image, which holds its routes,
// run as it is (no kit build, no ConfigMap); assigned to operatorID.
func prebuilt(ns, name, operatorID string, replicas int32) *camelv1.Integration {
	it := newIntegration(ns, name, operatorID, replicas, Image)
	it.Spec.Flows = nil
	return it
}

// newIntegration is the tests' integration (fixture.Integration): a
// timer-to-log flow on image or, with image "", on a kit built from deps.
func newIntegration(ns, name, operatorID string, replicas int32, image string, deps ...string) *camelv1.Integration {
	return fixture.Integration(ns, name, operatorID, replicas, image, deps...)
}

// floorObjects renders, with bareoperator.Children, the ConfigMap and the
// Deployment an operator would make for it. The ConfigMap is nil when the
// integration has none; the pod template is the same (image, command,
// env, volumes, labels).
// They are labelled with floorID and have no owner, so neither an
// operator nor the garbage collector acts on them.
func floorObjects(it *camelv1.Integration) (client.Object, client.Object, error) {
	cm, dep, err := bareoperator.Children(it, floorID)
	if err != nil {
		return nil, nil, err
	}
	dep.SetOwnerReferences(nil)
	if cm == nil {
		return nil, dep, nil
	}
	cm.SetOwnerReferences(nil)
	return cm, dep, nil
}

// assign moves obj to operator id: a merge patch of its operator-id annotation, and of nothing
// else, without a read before it.
func assign(ctx context.Context, c client.Client, obj client.Object, id string) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, camelv1.OperatorIDAnnotation, id)
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch)))
}

// createAll creates objs with a pool of workers and returns the first
// error.
func createAll(ctx context.Context, c client.Client, objs []client.Object) error {
	return parallel(ctx, len(objs), func(ctx context.Context, i int) error {
		if err := c.Create(ctx, objs[i]); err != nil {
			return fmt.Errorf("creating %s: %w", objs[i].GetName(), err)
		}
		return nil
	})
}

// parallel runs do(0..n-1) on a pool of workers and returns the first
// error.
func parallel(ctx context.Context, n int, do func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := do(ctx, i); err != nil {
					once.Do(func() { firstErr = err; cancel() })
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return firstErr
}
