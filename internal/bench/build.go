package bench

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/bench/result"
)

const (
	buildNamespace = "bench-build"
	baseRepository = "bench/base"
)

// runBuild runs n integrations without an image, over sets dependency
// sets, on op, whose platform is pointed at a registry the bench starts;
// then moves them all to next, whose platform uses the same registry.
func runBuild(ctx context.Context, e *env, op, next *Operator, n, sets int) (*result.Build, error) {
	res := &result.Build{Integrations: n, DependencySets: sets}
	reg, err := startRegistry(ctx, e.dir)
	if err != nil {
		return nil, err
	}
	defer reg.stop()
	if err := reg.pushBase(ctx, baseRepository+":latest"); err != nil {
		return nil, err
	}
	for _, o := range []*Operator{op, next} {
		if err := e.usePlatformRegistry(ctx, o.ID, reg.address); err != nil {
			return nil, err
		}
	}
	if err := e.createNamespace(ctx, buildNamespace); err != nil {
		return nil, err
	}
	w, err := measure.NewWatcher(ctx, e.config, buildNamespace, &camelv1.Integration{}, &appsv1.Deployment{}, &corev1.Pod{})
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	ready, err := w.Track(ctx, w.IntegrationReady(buildNamespace), nil)
	if err != nil {
		return nil, err
	}
	ready.Sweep = measure.ReadyIntegrations(e.client, buildNamespace)
	defer ready.Stop()
	objs := make([]client.Object, n)
	for i := range objs {
		deps := []string{"camel:timer", "camel:log", fmt.Sprintf("mvn:org.example.bench:set-%d:1.0", i%sets)}
		objs[i] = newIntegration(buildNamespace, fmt.Sprintf("build-%04d", i), op.ID, 1, "", deps...)
	}
	fmt.Fprintf(e.progress, "build: %d integrations over %d dependency sets on %s\n", n, sets, op.ID)
	start := time.Now()
	if err := createAll(ctx, e.client, objs); err != nil {
		return nil, err
	}
	if err := ready.Wait(ctx, n, "the integrations", e.report("Ready")); err != nil {
		return nil, err
	}
	ready.WarnMissed(e.progress, "integrations")
	res.Seconds = measure.Round3(ready.Last().Sub(start).Seconds())
	res.Curve = measure.Curve(start, values(ready.Times()))
	builds := &camelv1.BuildList{}
	if err := e.client.List(ctx, builds, client.InNamespace(buildNamespace)); err != nil {
		return nil, err
	}
	res.Builds = len(builds.Items)
	var durations []float64
	for _, b := range builds.Items {
		if d, err := time.ParseDuration(b.Status.Duration); err == nil {
			durations = append(durations, measure.Round3(d.Seconds()))
		}
	}
	res.BuildSeconds = measure.Summarize(durations)

	if res.Move, err = moveAll(ctx, e, w, buildNamespace, op, next, objs, 1); err != nil {
		return nil, err
	}
	if err := e.client.List(ctx, builds, client.InNamespace(buildNamespace),
		client.MatchingLabels{camelv1.OperatorIDLabel: next.ID}); err != nil {
		return nil, err
	}
	res.MoveBuilds = len(builds.Items)
	fmt.Fprintf(e.progress, "build: moves p99 %.2fs; deleting the integrations\n", res.Move.MoveSeconds.P99)
	return res, e.deleteNamespace(ctx, buildNamespace)
}

// usePlatformRegistry points operator id's platform at the registry, with
// the base image pushed there.
func (e *env) usePlatformRegistry(ctx context.Context, id, address string) error {
	itp := &camelv1.IntegrationPlatform{}
	key := client.ObjectKey{Namespace: operatorNamespace, Name: id}
	for {
		err := e.client.Get(ctx, key, itp)
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the platform %s: %w", id, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
	// The bench's operators run in its process: they build in themselves.
	patch := fmt.Sprintf(`{"spec":{"build":{"registry":{"address":%q,"insecure":true},"baseImage":%q,"buildConfiguration":{"strategy":"routine"}}}}`,
		address, baseRepository+":latest")
	if err := e.client.Patch(ctx, itp, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return fmt.Errorf("configuring the platform's registry: %w", err)
	}
	return nil
}
