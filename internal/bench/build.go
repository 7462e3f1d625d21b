package bench

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/bench/result"
	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/fixture"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/localcluster"
)

// buildNamespace holds the build scenario's burst of integrations.
const buildNamespace = "bench-build"

// BuildComponents are the components the build scenario adds to the
// runtime, one per dependency set. They are Camel modules with jars of
// their own for Maven to download, each checked to resolve at the
// runtime's version (mvn dependency:get).
var BuildComponents = []string{"camel:jackson", "camel:http", "camel:ftp", "camel:quartz",
	"camel:sql", "camel:jms", "camel:kafka", "camel:platform-http-vertx"}

// buildKitTimeout bounds one kit's build: a cold Maven cache downloads
// some hundred files.
const buildKitTimeout = 6 * time.Minute

// startMavenOperators installs operators that build in builder pods with
// Maven, each with its own empty Maven cache, pushing to the cluster's
// registry.
func (e *env) startMavenOperators(ctx context.Context, ids ...string) ([]*Operator, error) {
	cache := resource.MustParse("2Gi")
	return e.startOperators(ctx, func(c *install.Config) {
		c.BuildStrategy, c.MavenCache = build.StrategyPod, &cache
		c.Registry, c.RegistryInsecure = e.cluster.RegistryAddress, true
	}, ids...)
}

// runBuild measures kits that Maven builds in builder pods, on two
// operators of their own. First one kit at a time: the runtime's set with
// an empty cache, one more dependency on that kit, and both again in
// another namespace with everything cached. Then n integrations over
// sets dependency sets in one burst, moved at once to the second
// operator, whose kits for the same sets wrap the images the pods run:
// it builds nothing, and no pod starts. The integrations' pods run on the
// simulated nodes: builds are measured here, JVMs elsewhere.
func runBuild(ctx context.Context, e *env, n, sets int) (*result.Build, error) {
	ops, err := e.startMavenOperators(ctx, "build-a", "build-b")
	if err != nil {
		return nil, err
	}
	op, next := ops[0], ops[1]
	res := &result.Build{Integrations: n, DependencySets: sets}
	reg := image.Registry{Address: e.cluster.RegistryAddress, Insecure: true}
	cases := []struct{ namespace, name, title, dependency string }{
		{buildNamespace + "-cold", "runtime", "runtime set, empty cache", ""},
		{buildNamespace + "-cold", "plus-one", "+ " + BuildComponents[0] + " on the runtime kit", BuildComponents[0]},
		{buildNamespace + "-warm", "runtime", "runtime set, cached (another namespace)", ""},
		{buildNamespace + "-warm", "plus-one", "+ " + BuildComponents[0] + " on the runtime kit, cached", BuildComponents[0]},
	}
	for _, c := range cases {
		if err := e.createSimulatedNamespace(ctx, c.namespace); err != nil {
			return nil, err
		}
		var deps []string
		if c.dependency != "" {
			deps = append(deps, c.dependency)
		}
		fmt.Fprintf(e.progress, "build: a kit of the %s\n", c.title)
		k, err := buildOneKit(ctx, e, reg, newIntegration(c.namespace, c.name, op.ID, 1, "", deps...))
		if err != nil {
			return nil, fmt.Errorf("the kit of the %s: %w", c.title, err)
		}
		k.Case = c.title
		fmt.Fprintf(e.progress, "build:   %.1f s, %d jars (%d new), Maven downloaded %d files (%.1f MB), %d of %d layers reused\n",
			k.Seconds, k.Jars, k.AddedJars, k.DownloadedFiles, float64(k.DownloadedBytes)/1e6, k.LayersReused, k.Layers)
		res.Kits = append(res.Kits, *k)
	}
	if err := runCatalog(ctx, e, reg, op, res); err != nil {
		return nil, err
	}
	for _, ns := range []string{buildNamespace + "-cold", buildNamespace + "-warm"} {
		if err := e.deleteNamespace(ctx, ns); err != nil {
			return nil, err
		}
	}
	if err := runBuildBurst(ctx, e, op, next, res); err != nil {
		return nil, err
	}
	return res, e.deleteNamespace(ctx, buildNamespace)
}

// runBuildBurst creates res.Integrations integrations over
// res.DependencySets sets on op in one burst, then moves them to next.
func runBuildBurst(ctx context.Context, e *env, op, next *Operator, res *result.Build) (err error) {
	n, sets := res.Integrations, res.DependencySets
	if err := e.createSimulatedNamespace(ctx, buildNamespace); err != nil {
		return err
	}
	ctx, stop := e.stopOnBuildError(ctx, buildNamespace)
	defer func() {
		stop()
		if cause := context.Cause(ctx); err != nil && errors.Is(cause, errBuildFailed) {
			err = cause
		}
	}()
	w, err := measure.NewWatcher(ctx, e.config, buildNamespace, &camelv1.Integration{}, &appsv1.Deployment{}, &corev1.Pod{})
	if err != nil {
		return err
	}
	defer w.Stop()
	ready, err := w.Track(ctx, w.IntegrationReady(buildNamespace), nil)
	if err != nil {
		return err
	}
	ready.Sweep = measure.ReadyIntegrations(e.client, buildNamespace)
	defer ready.Stop()
	objs := make([]client.Object, n)
	for i := range objs {
		objs[i] = newIntegration(buildNamespace, fmt.Sprintf("build-%04d", i), op.ID, 1, "", BuildComponents[i%sets])
	}
	fmt.Fprintf(e.progress, "build: %d integrations over %d dependency sets on %s\n", n, sets, op.ID)
	start := time.Now()
	if err := createAll(ctx, e.client, objs); err != nil {
		return err
	}
	if err := ready.Wait(ctx, n, "the integrations", e.report("Ready")); err != nil {
		return err
	}
	ready.WarnMissed(e.progress, "integrations")
	res.Seconds = measure.Round3(ready.Last().Sub(start).Seconds())
	res.Curve = measure.Curve(start, values(ready.Times()))
	var durations []float64
	if res.Builds, durations, err = e.buildsOf(ctx, buildNamespace, op.ID); err != nil {
		return err
	}
	res.BuildSeconds = measure.Summarize(durations)

	if res.Move, err = moveAll(ctx, e, w, buildNamespace, op, next, objs, 1); err != nil {
		return err
	}
	if res.MoveBuilds, _, err = e.buildsOf(ctx, buildNamespace, next.ID); err != nil {
		return err
	}
	if res.MoveKitsAdopted, err = adoptedKits(ctx, e.client, buildNamespace, next.ID); err != nil {
		return err
	}
	fmt.Fprintf(e.progress, "build: moves p99 %.2fs; deleting the integrations\n", res.Move.MoveSeconds.P99)
	return nil
}

// errBuildFailed is the cause of a context that stopOnBuildError ended.
var errBuildFailed = errors.New("a build failed")

// stopOnBuildError returns a context that ends, with errBuildFailed and
// the Build's message as its cause, once a Build of namespace is in
// Error: the integrations that wait for it would never be Ready.
func (e *env) stopOnBuildError(ctx context.Context, namespace string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		for {
			builds := &camelv1.BuildList{}
			if err := e.client.List(ctx, builds, client.InNamespace(namespace)); err == nil {
				for _, b := range builds.Items {
					if b.Status.Phase == camelv1.BuildPhaseError {
						cancel(fmt.Errorf("%w: build %s: %s", errBuildFailed, b.Name, readyMessage(&b.Status.CommonStatus)))
						return
					}
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(2 * time.Second):
			}
		}
	}()
	return ctx, func() { cancel(nil) }
}

// buildsOf counts the Builds of operator id in namespace, with the
// durations of those that ended.
func (e *env) buildsOf(ctx context.Context, namespace, id string) (int, []float64, error) {
	builds := &camelv1.BuildList{}
	if err := e.client.List(ctx, builds, client.InNamespace(namespace),
		client.MatchingLabels{camelv1.OperatorIDLabel: id}); err != nil {
		return 0, nil, err
	}
	var durations []float64
	for _, b := range builds.Items {
		if d, err := time.ParseDuration(b.Status.Duration); err == nil {
			durations = append(durations, measure.Round3(d.Seconds()))
		}
	}
	return len(builds.Items), durations, nil
}

// buildOneKit creates it, waits until its kit is Ready, and reads what
// its Build says and what its image shares with the image it was built
// on.
func buildOneKit(ctx context.Context, e *env, reg image.Registry, it *camelv1.Integration) (*result.KitBuild, error) {
	ctx, cancel := context.WithTimeout(ctx, buildKitTimeout)
	defer cancel()
	start := time.Now()
	if err := e.client.Create(ctx, it); err != nil {
		return nil, err
	}
	kit, b := &camelv1.IntegrationKit{}, &camelv1.Build{}
	for {
		err := e.client.Get(ctx, client.ObjectKeyFromObject(it), it)
		if err == nil && it.Status.IntegrationKit != nil {
			err = e.client.Get(ctx, client.ObjectKey{Namespace: it.Namespace, Name: it.Status.IntegrationKit.Name}, kit)
			if err == nil && kit.Status.Phase == camelv1.IntegrationKitPhaseError {
				return nil, fmt.Errorf("kit %s in Error: %s", kit.Name, readyMessage(&kit.Status.CommonStatus))
			}
			if err == nil && kit.Status.Phase == camelv1.IntegrationKitPhaseReady {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("no Ready kit for integration %s after %s (kit phase %q)", it.Name, buildKitTimeout, kit.Status.Phase)
		case <-time.After(250 * time.Millisecond):
		}
	}
	k := &result.KitBuild{Dependencies: it.Spec.Dependencies, ReadySeconds: measure.Round3(time.Since(start).Seconds())}
	if err := e.client.Get(ctx, client.ObjectKeyFromObject(kit), b); err != nil {
		return nil, err
	}
	if d, err := time.ParseDuration(b.Status.Duration); err == nil {
		k.Seconds = measure.Round3(d.Seconds())
	}
	jars, m, ok := build.ParseSummary(readyMessage(&b.Status.CommonStatus))
	if !ok {
		return nil, fmt.Errorf("build %s does not say what Maven did: %q", b.Name, readyMessage(&b.Status.CommonStatus))
	}
	k.Jars, k.AddedJars, k.Parent = jars, m.Added, m.Parent
	k.DownloadedFiles, k.DownloadedBytes = m.DownloadedFiles, m.DownloadedBytes
	layers, err := layerDigests(ctx, reg, kit.Status.Image)
	if err != nil {
		return nil, err
	}
	under, err := layerDigests(ctx, reg, b.Status.BaseImage)
	if err != nil {
		return nil, err
	}
	k.Layers = len(layers)
	for i := 0; i < len(under) && i < len(layers) && layers[i] == under[i]; i++ {
		k.LayersReused++
	}
	return k, nil
}

// readyMessage is the message of a status's Ready condition, "" without one.
func readyMessage(s *camelv1.CommonStatus) string {
	if c := s.GetCondition(camelv1.ConditionReady); c != nil {
		return c.Message
	}
	return ""
}

// layerDigests are the digests of the layers of the image ref.
func layerDigests(ctx context.Context, reg image.Registry, ref string) ([]string, error) {
	img, err := image.Pull(ctx, reg, ref)
	if err != nil {
		return nil, fmt.Errorf("reading image %s: %w", ref, err)
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(layers))
	for i, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return nil, err
		}
		out[i] = d.String()
	}
	return out, nil
}

// createSimulatedNamespace creates a namespace whose pods the local
// cluster keeps on its simulated nodes, kit images included.
func (e *env) createSimulatedNamespace(ctx context.Context, name string) error {
	return e.createNamespaceWith(ctx, name, map[string]string{localcluster.SimulatedLabel: "true"})
}

// catalogKamelet is the Kamelet of the catalog whose dependencies (camel:jackson and camel:kafka,
// the second in no kit built before it) the build scenario's Kamelet kits add to the runtime set.
const catalogKamelet = "insert-field-action"

// runCatalog has op's platform install the Kamelet catalog of its Camel version, and times it:
// from the platform's change to KameletCatalogAvailable, which includes the catalog kit's build,
// and the Kamelets' apply alone, which the condition reports. Then it builds the kit of a route
// through a catalog Kamelet that brings a dependency: cold (Maven downloads it), then warm (the
// same in another namespace, all cached).
func runCatalog(ctx context.Context, e *env, reg image.Registry, op *Operator, res *result.Build) error {
	fmt.Fprintf(e.progress, "build: the Kamelet catalog of operator %s\n", op.ID)
	start := time.Now()
	itp := &camelv1.IntegrationPlatform{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: op.ID}}
	if err := e.client.Patch(ctx, itp, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"kamelet":{"catalog":true}}}`))); err != nil {
		return err
	}
	msg, err := waitCatalog(ctx, e, itp)
	if err != nil {
		return err
	}
	c := &result.Catalog{Seconds: measure.Round3(time.Since(start).Seconds()), Message: msg}
	if m := catalogApplied.FindStringSubmatch(msg); m != nil {
		c.Kamelets, _ = strconv.Atoi(m[2])
		if d, err := time.ParseDuration(m[1]); err == nil {
			c.ApplySeconds = measure.Round3(d.Seconds())
		}
	}
	fmt.Fprintf(e.progress, "build:   %.1f s to installed, of which %.1f s to apply %d Kamelets\n", c.Seconds, c.ApplySeconds, c.Kamelets)
	res.Catalog = c
	for _, ns := range []string{buildNamespace + "-kamelet-cold", buildNamespace + "-kamelet-warm"} {
		if err := e.createSimulatedNamespace(ctx, ns); err != nil {
			return err
		}
		it := newIntegration(ns, "kamelet", op.ID, 1, "")
		it.Spec.Flows = []camelv1.RawObject{fixture.Raw(map[string]any{"from": map[string]any{"uri": "timer:tick",
			"steps": []any{map[string]any{"kamelet": map[string]any{"name": catalogKamelet}}, map[string]any{"to": "log:out"}}}})}
		title := "a route through " + catalogKamelet + " of the catalog, " + strings.TrimPrefix(ns, buildNamespace+"-kamelet-")
		fmt.Fprintf(e.progress, "build: a kit of %s\n", title)
		k, err := buildOneKit(ctx, e, reg, it)
		if err != nil {
			return fmt.Errorf("the kit of %s: %w", title, err)
		}
		k.Case = title
		res.Kits = append(res.Kits, *k)
		if err := e.deleteNamespace(ctx, ns); err != nil {
			return err
		}
	}
	return nil
}

// catalogApplied reads the apply's duration and count from KameletCatalogAvailable's message.
var catalogApplied = regexp.MustCompile(`installed in \S+ in ([0-9.]+m?s): ([0-9]+) Kamelets applied`)

// waitCatalog waits for the platform's KameletCatalogAvailable to be True, and returns its message.
func waitCatalog(ctx context.Context, e *env, itp *camelv1.IntegrationPlatform) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, buildKitTimeout)
	defer cancel()
	for {
		if err := e.client.Get(ctx, client.ObjectKeyFromObject(itp), itp); err == nil {
			if c := meta.FindStatusCondition(itp.Status.Conditions, "KameletCatalogAvailable"); c != nil {
				switch c.Status {
				case metav1.ConditionTrue:
					return c.Message, nil
				case metav1.ConditionFalse:
					return "", fmt.Errorf("the Kamelet catalog: %s", c.Message)
				}
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("the Kamelet catalog was not installed after %s", buildKitTimeout)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
