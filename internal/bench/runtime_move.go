package bench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/bench/result"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/kit"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// runtimeWaves are the canary's waves: half of the integrations, then the rest.
var runtimeWaves = []float64{0.5, 1}

// runtimeMoveTimeout bounds one wave: the new owner's kits built, and its pods ready, included.
const runtimeMoveTimeout = 10 * time.Minute

// moveRuntime moves the running integrations names from one operator to another in a canary of
// runtimeWaves: a wave starts once the previous one runs under to. It times each move and wave,
// counts the Builds to made and the pods that started, and reads, when the pods were kept, every
// pod's log for a gap in its timer's counter.
func moveRuntime(ctx context.Context, e *env, cs kubernetes.Interface, from, to *Operator, names []string) (*result.RuntimeMove, error) {
	res := &result.RuntimeMove{From: from.ID, To: to.ID, Integrations: len(names)}
	w, err := measure.NewWatcher(ctx, e.config, runtimeNamespace, &camelv1.Integration{}, &appsv1.Deployment{}, &corev1.Pod{})
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	if err := awaitRunning(ctx, e, w, from, len(names)); err != nil {
		return nil, err
	}
	before, err := runtimePods(ctx, e.client)
	if err != nil {
		return nil, err
	}
	pods, err := measure.NewPodWatch(ctx, w, runtimeNamespace)
	if err != nil {
		return nil, err
	}
	moved, err := w.Track(ctx, w.RunningUnder(runtimeNamespace, to.ID), pods.Observe)
	if err != nil {
		return nil, err
	}
	defer moved.Stop()
	patchedAt, times, err := moveWaves(ctx, e, moved, to, names, res)
	if err != nil {
		return nil, err
	}
	res.PodsStarted, res.MinReadyPods = pods.Started(), int(min(1, pods.Minimum()))

	if res.KitsAdopted, err = adoptedKits(ctx, e.client, runtimeNamespace, to.ID); err != nil {
		return nil, err
	}
	if res.Builds, _, err = e.buildsOf(ctx, runtimeNamespace, to.ID); err != nil {
		return nil, err
	}

	after, err := runtimePods(ctx, e.client)
	if err != nil {
		return nil, err
	}
	for uid, p := range after {
		if b, kept := before[uid]; kept {
			res.Restarts += restarts(p) - restarts(b)
		}
	}
	if res.PodsStarted > 0 {
		return res, nil
	}
	// The pods were kept: each log must count on from before the move, with no number missing.
	sleep(ctx, 3*time.Second)
	if err := readTickGaps(ctx, cs, after, patchedAt, times, res); err != nil {
		return nil, err
	}
	return res, nil
}

// awaitRunning waits for n integrations to be Ready under operator from.
func awaitRunning(ctx context.Context, e *env, w *measure.Watcher, from *Operator, n int) error {
	// A pod logs its first tick before its readiness probe passes: the move starts from
	// integrations that are Ready.
	running, err := w.Track(ctx, w.RunningUnder(runtimeNamespace, from.ID), nil)
	if err != nil {
		return err
	}
	err = running.Wait(ctx, n, "the integrations to run under "+from.ID, e.report("running"))
	running.Stop()
	return err
}

// moveWaves assigns names to operator to, wave by wave, and times the waves and each move. It
// returns when each integration was patched and when it ran under to.
func moveWaves(ctx context.Context, e *env, moved *measure.Tracker, to *Operator, names []string,
	res *result.RuntimeMove) (patchedAt, times map[string]time.Time, err error) {
	patchedAt = map[string]time.Time{}
	start := time.Now()
	done := 0
	for i, share := range runtimeWaves {
		wave := names[done:max(done+1, int(float64(len(names))*share+0.5))]
		if i == len(runtimeWaves)-1 {
			wave = names[done:]
		}
		fmt.Fprintf(e.progress, "runtime:   wave %d/%d: %d integrations to %s\n", i+1, len(runtimeWaves), len(wave), to.ID)
		waveStart := time.Now()
		for _, name := range wave {
			patchedAt[name] = time.Now()
			it := &camelv1.Integration{}
			it.Namespace, it.Name = runtimeNamespace, name
			if err := assign(ctx, e.client, it, to.ID); err != nil {
				return nil, nil, fmt.Errorf("moving integration %s: %w", name, err)
			}
		}
		done += len(wave)
		waitCtx, cancel := context.WithTimeout(ctx, runtimeMoveTimeout)
		err := moved.Wait(waitCtx, done, fmt.Sprintf("wave %d to run under %s", i+1, to.ID), e.report("moved"))
		cancel()
		if err != nil {
			return nil, nil, err
		}
		res.WaveSeconds = append(res.WaveSeconds, measure.Round3(moved.Last().Sub(waveStart).Seconds()))
	}
	res.TotalSeconds = measure.Round3(moved.Last().Sub(start).Seconds())
	times = moved.Times()
	for _, name := range names {
		res.MoveTimes = append(res.MoveTimes, measure.Round3(times[name].Sub(patchedAt[name]).Seconds()))
	}
	res.MoveSeconds = measure.Summarize(res.MoveTimes)
	return patchedAt, times, nil
}

// readTickGaps reads each kept pod's log for ticks missing, or none after its integration's move
// (at times, patched at patchedAt), into res's LostTicks and Gaps.
func readTickGaps(ctx context.Context, cs kubernetes.Interface, pods map[types.UID]corev1.Pod,
	patchedAt, times map[string]time.Time, res *result.RuntimeMove) error {
	for _, p := range pods {
		data, err := cs.CoreV1().Pods(runtimeNamespace).GetLogs(p.Name, &corev1.PodLogOptions{Timestamps: true}).DoRaw(ctx)
		if err != nil {
			return fmt.Errorf("reading the log of pod %s: %w", p.Name, err)
		}
		name := p.Labels[camelv1.IntegrationLabel]
		lost, last, lastAt := tickGaps(string(data))
		res.LostTicks += lost
		if lost > 0 {
			res.Gaps = append(res.Gaps, fmt.Sprintf("%s: %d ticks missing", name, lost))
		}
		if at, ok := patchedAt[name]; ok && !lastAt.After(times[name]) {
			res.Gaps = append(res.Gaps, fmt.Sprintf("%s: no tick after its move (the last, %d, at %s; moved at %s)",
				name, last, lastAt.Format(time.RFC3339Nano), at.Format(time.RFC3339Nano)))
		}
	}
	slices.Sort(res.Gaps)
	return nil
}

// adoptedKits counts the kits of operator id in namespace that wrap another operator's kit image.
func adoptedKits(ctx context.Context, c client.Client, namespace, id string) (int, error) {
	kits := &camelv1.IntegrationKitList{}
	if err := c.List(ctx, kits, client.InNamespace(namespace), client.MatchingLabels{camelv1.OperatorIDLabel: id}); err != nil {
		return 0, err
	}
	n := 0
	for _, k := range kits.Items {
		if k.Annotations[kit.AdoptedFromAnnotation] != "" {
			n++
		}
	}
	return n, nil
}

// runtimePods returns the runtime namespace's pods that are not being deleted, by UID.
func runtimePods(ctx context.Context, c client.Client) (map[types.UID]corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := c.List(ctx, list, client.InNamespace(runtimeNamespace)); err != nil {
		return nil, err
	}
	out := map[types.UID]corev1.Pod{}
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && p.Labels[camelv1.IntegrationLabel] != "" {
			out[p.UID] = p
		}
	}
	return out, nil
}

// restarts is the sum of a pod's containers' restart counts.
func restarts(p corev1.Pod) int {
	n := 0
	for _, c := range p.Status.ContainerStatuses {
		n += int(c.RestartCount)
	}
	return n
}

// tickGaps reads the tick counters of a log read with timestamps: how many numbers are missing
// between consecutive ticks, and the last tick with its time.
func tickGaps(log string) (lost, last int, lastAt time.Time) {
	for _, line := range strings.Split(log, "\n") {
		stamp, text, ok := strings.Cut(line, " ")
		_, count, found := strings.Cut(text, tickMark)
		if !ok || !found {
			continue
		}
		fields := strings.Fields(count)
		if len(fields) == 0 {
			continue
		}
		n, err := strconv.Atoi(fields[0])
		at, terr := time.Parse(time.RFC3339Nano, stamp)
		if err != nil || terr != nil {
			continue
		}
		if last > 0 && n > last+1 {
			lost += n - last - 1
		}
		last, lastAt = n, at
	}
	return lost, last, lastAt
}

// useOtherBaseImage points operator op's platform at the default base image by its digest: the
// same Java, under another reference, so that op builds kits of its own for every set.
func useOtherBaseImage(ctx context.Context, e *env, op *Operator) error {
	reg := image.Registry{Address: e.cluster.RegistryAddress, Insecure: true}
	img, err := image.Pull(ctx, reg, runtime.BaseImage.Repository)
	if err != nil {
		return err
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	repo, _, _ := strings.Cut(runtime.BaseImage.Repository, ":")
	ref := repo + "@" + d.String()
	itp := &camelv1.IntegrationPlatform{}
	key := client.ObjectKey{Namespace: operatorNamespace, Name: op.ID}
	patch := fmt.Sprintf(`{"spec":{"build":{"baseImage":%q}}}`, ref)
	itp.Namespace, itp.Name = key.Namespace, key.Name
	if err := e.client.Patch(ctx, itp, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return fmt.Errorf("setting the base image of platform %s: %w", op.ID, err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if err := e.client.Get(ctx, key, itp); err == nil && itp.Status.Build.BaseImage == ref {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("platform %s did not take the base image %s within a minute", op.ID, ref)
		}
		sleep(ctx, 250*time.Millisecond)
	}
}
