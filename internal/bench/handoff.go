package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// HandoffResult holds the hand-off scenario's figures.
type HandoffResult struct {
	Integrations int    `json:"integrations"`
	Replicas     int32  `json:"replicas"`
	From         string `json:"from"`
	To           string `json:"to"`
	// MoveSeconds is, per integration, the time from its annotation patch
	// to being owned by To, Ready, with its Deployment applied by To and
	// rolled out.
	MoveSeconds  Distribution `json:"moveSeconds"`
	MoveTimes    []float64    `json:"moveTimes"`
	TotalSeconds float64      `json:"totalSeconds"`
	// AdoptSeconds is, per integration, the time from its annotation
	// patch to being owned by To (the release by From and the adoption):
	// the rest of a move is To's apply of the children and its status.
	AdoptSeconds Distribution `json:"adoptSeconds"`
	// FloorMoveSeconds is the least a move can cost: as many bare
	// Deployments with the same pod template, given the change a move
	// makes to an integration's Deployment (its operator-id label) in one
	// burst; per Deployment, the time from its patch
	// until a watch shows it. FloorMoveTimes holds the times and P99Ratio
	// is Caravan's p99 over the floor's.
	FloorMoveSeconds Distribution `json:"floorMoveSeconds"`
	FloorMoveTimes   []float64    `json:"floorMoveTimes"`
	P99Ratio         float64      `json:"p99Ratio"`
	// MinReadyPods is the fewest ready (not terminating) pods any moved
	// integration had during the move, seen on a pod watch, and
	// PodsStarted the pods created during the moves: a move does not
	// change what the pods run, so it restarts none.
	MinReadyPods int32 `json:"minReadyPods"`
	PodsStarted  int   `json:"podsStarted"`
	// ReleaseWrites and WritesByFromAfterRelease are the writes the old
	// owner made, by its own identity (API server audit log), to the moved
	// integrations, their children and Events after each one's annotation
	// patch: those of the release itself (the status write recording it
	// and the label handover, at most two per integration), and all others,
	// which the handover promises are none.
	ReleaseWrites            int `json:"releaseWrites"`
	WritesByFromAfterRelease int `json:"writesByFromAfterRelease"`
	// WritesByFromAfterReleaseByKind splits the latter by "verb resource".
	WritesByFromAfterReleaseByKind map[string]int `json:"writesByFromAfterReleaseByKind,omitempty"`
	// FromWritesSettled is the old owner's write requests (all resources,
	// rest_client_requests_total) in SettleSeconds after the last move,
	// and FromWritesIdle the same over as long before the burst: the
	// difference is what the moves cost it afterwards.
	SettleSeconds     float64 `json:"settleSeconds"`
	FromWritesSettled float64 `json:"fromWritesSettled"`
	FromWritesIdle    float64 `json:"fromWritesIdle"`
}

const (
	handoffNamespace = "bench-handoff"
	settle           = 15 * time.Second
)

// runHandoff runs n integrations with replicas pods on from, then moves
// them all to to in one burst of annotation patches.
func runHandoff(ctx context.Context, e *env, from, to *Operator, n int, replicas int32) (*HandoffResult, error) {
	floor, err := runHandoffFloor(ctx, e, n, replicas)
	if err != nil {
		return nil, err
	}
	if err := e.createNamespace(ctx, handoffNamespace); err != nil {
		return nil, err
	}
	w, err := newWatcher(ctx, e.config, handoffNamespace, &camelv1.Integration{}, &appsv1.Deployment{}, &corev1.Pod{})
	if err != nil {
		return nil, err
	}
	defer w.stop()
	objs := make([]client.Object, n)
	for i := range objs {
		objs[i] = newIntegration(handoffNamespace, fmt.Sprintf("mover-%04d", i), from.ID, replicas, Image)
	}
	fmt.Fprintf(e.progress, "hand-off: %d integrations with %d replicas on %s\n", n, replicas, from.ID)
	running, err := w.track(ctx, w.runningUnder(handoffNamespace, from.ID), nil)
	if err != nil {
		return nil, err
	}
	if err := createAll(ctx, e.client, objs); err != nil {
		return nil, err
	}
	err = running.wait(ctx, n, "the integrations to run", e.report("running"))
	running.stop()
	if err != nil {
		return nil, err
	}
	res, err := moveAll(ctx, e, w, handoffNamespace, from, to, objs, replicas)
	if err != nil {
		return nil, err
	}
	res.FloorMoveTimes, res.FloorMoveSeconds = floor, Summarize(floor)
	res.P99Ratio = round3(ratio(res.MoveSeconds.P99, res.FloorMoveSeconds.P99))
	fmt.Fprintf(e.progress, "hand-off: p99 %.2fs; deleting the integrations\n", res.MoveSeconds.P99)
	return res, e.deleteNamespace(ctx, handoffNamespace)
}

// moveAll moves objs, Running on from with replicas pods each in
// namespace (watched by w: its Integrations, Deployments and Pods), to to
// in one burst of annotation patches, and returns how the moves went.
func moveAll(ctx context.Context, e *env, w *watcher, namespace string, from, to *Operator, objs []client.Object, replicas int32) (*HandoffResult, error) {
	n := len(objs)
	res := &HandoffResult{Integrations: n, Replicas: replicas, From: from.ID, To: to.ID,
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
	res.FromWritesIdle = countersOf(idleAfter).minus(countersOf(idleBefore)).writes

	pods, err := newPodWatch(ctx, w, namespace)
	if err != nil {
		return nil, err
	}
	moved, err := w.track(ctx, w.runningUnder(namespace, to.ID), pods.observe)
	if err != nil {
		return nil, err
	}
	defer moved.stop()
	adopted, err := w.track(ctx, w.ownedBy(namespace, to.ID), nil)
	if err != nil {
		return nil, err
	}
	defer adopted.stop()
	patchedAt := make([]time.Time, n)
	fmt.Fprintf(e.progress, "moving %d integrations from %s to %s in one burst\n", n, from.ID, to.ID)
	start := time.Now()
	err = parallel(ctx, n, func(ctx context.Context, i int) error {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, camelv1.OperatorIDAnnotation, to.ID)
		patchedAt[i] = time.Now()
		return e.client.Patch(ctx, objs[i], client.RawPatch(types.MergePatchType, []byte(patch)))
	})
	if err != nil {
		return nil, fmt.Errorf("moving the integrations: %w", err)
	}
	if err := moved.wait(ctx, n, "the moves", e.report("moved")); err != nil {
		return nil, err
	}
	done, owned := moved.times(), adopted.times()
	var adoptTimes []float64
	for i, obj := range objs {
		res.MoveTimes = append(res.MoveTimes, round3(done[obj.GetName()].Sub(patchedAt[i]).Seconds()))
		if at, ok := owned[obj.GetName()]; ok {
			adoptTimes = append(adoptTimes, round3(at.Sub(patchedAt[i]).Seconds()))
		}
	}
	res.MoveSeconds, res.AdoptSeconds = Summarize(res.MoveTimes), Summarize(adoptTimes)
	res.TotalSeconds = round3(moved.last().Sub(start).Seconds())

	if err := measureFromWrites(ctx, e, namespace, from, objs, patchedAt, res); err != nil {
		return nil, err
	}
	res.MinReadyPods, res.PodsStarted = min(res.MinReadyPods, pods.minimum()), pods.started()
	return res, nil
}

// measureFromWrites counts the old owner's writes after the moves: over
// a settling period, from its metrics, and per moved integration, from
// the audit log.
func measureFromWrites(ctx context.Context, e *env, namespace string, from *Operator, objs []client.Object, patchedAt []time.Time, res *HandoffResult) error {
	before, err := from.Scrape(ctx)
	if err != nil {
		return err
	}
	sleep(ctx, settle)
	after, err := from.Scrape(ctx)
	if err != nil {
		return err
	}
	res.FromWritesSettled = countersOf(after).minus(countersOf(before)).writes
	patched := map[string]time.Time{}
	for i, obj := range objs {
		patched[obj.GetName()] = patchedAt[i]
	}
	writes, err := writesAfter(e.cluster.AuditLogPath(), from.User, namespace, patched)
	if err != nil {
		return err
	}
	res.ReleaseWrites, res.WritesByFromAfterReleaseByKind = writes.release, writes.beyond
	for _, n := range writes.beyond {
		res.WritesByFromAfterRelease += n
	}
	return nil
}

// runningUnder is the check that an integration is owned by id, Ready,
// and that its Deployment is id's and rolled out.
func (w *watcher) runningUnder(namespace, id string) func(string) bool {
	return func(name string) bool {
		key := client.ObjectKey{Namespace: namespace, Name: name}
		it := &camelv1.Integration{}
		if w.cache.Get(context.Background(), key, it) != nil {
			return false
		}
		if it.Status.Ownership.Owner != id || !meta.IsStatusConditionTrue(it.Status.Conditions, camelv1.ConditionReady) {
			return false
		}
		d := &appsv1.Deployment{}
		if w.cache.Get(context.Background(), key, d) != nil {
			return false
		}
		return d.Labels[camelv1.OperatorIDLabel] == id && rolledOut(d)
	}
}

// podWatch keeps the fewest ready, not terminating, pods any integration
// had, from the pod events of the watcher, and the pods that were not
// there when it started.
type podWatch struct {
	w         *watcher
	namespace string
	mu        sync.Mutex
	min       int32
	seen      bool
	before    map[types.UID]bool
	new       map[types.UID]bool
}

func newPodWatch(ctx context.Context, w *watcher, namespace string) (*podWatch, error) {
	p := &podWatch{w: w, namespace: namespace, min: 1 << 30, before: map[types.UID]bool{}, new: map[types.UID]bool{}}
	list := &corev1.PodList{}
	if err := w.cache.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	for i := range list.Items {
		p.before[list.Items[i].UID] = true
	}
	return p, nil
}

func (p *podWatch) observe(obj client.Object) {
	if _, ok := obj.(*corev1.Pod); !ok {
		return
	}
	p.mu.Lock()
	if !p.before[obj.GetUID()] {
		p.new[obj.GetUID()] = true
	}
	p.mu.Unlock()
	name := obj.GetLabels()[camelv1.IntegrationLabel]
	if name == "" {
		return
	}
	list := &corev1.PodList{}
	if p.w.cache.List(context.Background(), list, client.InNamespace(p.namespace),
		client.MatchingLabels{camelv1.IntegrationLabel: name}) != nil {
		return
	}
	var ready int32
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp == nil && podReady(&list.Items[i]) {
			ready++
		}
	}
	p.mu.Lock()
	p.min, p.seen = min(p.min, ready), true
	p.mu.Unlock()
}

func (p *podWatch) started() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.new)
}

func (p *podWatch) minimum() int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.seen {
		return 1 << 30
	}
	return p.min
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
