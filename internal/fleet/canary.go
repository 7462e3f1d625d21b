package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/canary"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/reassign"
)

// canaryEvery is how often a running wave is looked at again: the fleet
// controller does not watch the integrations it moves.
const canaryEvery = 2 * time.Second

// nextStep asks for the canary's next step at once, in a reconcile of its own, once this step's status is written.
const nextStep = time.Millisecond

// defaultWaveTimeout is how long a wave waits when spec.canary.waveTimeout
// is unset, as `caravan reassign --wave-timeout` does.
const defaultWaveTimeout = 5 * time.Minute

// canaryRun is one reconcile of the canary of iop.
type canaryRun struct {
	r   *Reconciler
	iop *camelv1alpha1.IntegrationOperator
	// st is iop's status.canary, which the steps update.
	st  *camelv1alpha1.CanaryStatus
	now time.Time
}

// reconcileCanary runs spec.canary one step at a time, once the operator has rolled out. Every step
// is recorded in status.canary before the moves it decides are made: a wave is planned (its
// resources named in status.canary.current), then moved and awaited, so that a reconcile that stops
// half-way, or whose status write fails, is taken up where it was and never moves more than a wave.
func (r *Reconciler) reconcileCanary(ctx context.Context, iop *camelv1alpha1.IntegrationOperator) (reconcile.Result, error) {
	spec := iop.Spec.Canary
	if spec == nil {
		iop.Status.Canary = nil
		meta.RemoveStatusCondition(&iop.Status.Conditions, camelv1alpha1.ConditionCanary)
		return reconcile.Result{}, nil
	}
	if !meta.IsStatusConditionTrue(iop.Status.Conditions, camelv1alpha1.ConditionDeployed) {
		meta.SetStatusCondition(&iop.Status.Conditions, metav1.Condition{Type: camelv1alpha1.ConditionCanary,
			Status: metav1.ConditionFalse, Reason: string(ReasonCanaryWaiting), ObservedGeneration: iop.Generation,
			Message: fmt.Sprintf("the canary from %s starts once operator %s has rolled out", spec.From, iop.Name)})
		return reconcile.Result{}, nil
	}
	c := &canaryRun{r: r, iop: iop, st: iop.Status.Canary, now: r.Clock.Now()}
	if c.st == nil || !equality.Semantic.DeepEqual(c.st.Spec, *spec) {
		if err := c.start(ctx); err != nil {
			return reconcile.Result{}, err
		}
	}
	c.st.ObservedGeneration = iop.Generation
	result, err := c.step(ctx)
	c.report()
	return result, err
}

// start begins a new canary: it checks spec.canary, and counts what the
// operator it moves from has, which the waves' sizes are shares of.
func (c *canaryRun) start(ctx context.Context) error {
	spec := *c.iop.Spec.Canary
	c.st = &camelv1alpha1.CanaryStatus{Spec: spec, Phase: camelv1alpha1.CanaryPhaseProgressing}
	c.iop.Status.Canary = c.st
	waves, err := c.parse()
	if err != nil {
		c.st.Phase, c.st.Message = camelv1alpha1.CanaryPhaseFailed, "spec.canary: "+err.Error()
		return nil
	}
	targets, err := c.remaining(ctx)
	if err != nil {
		return err
	}
	for _, size := range canary.Sizes(waves, len(targets)) {
		c.st.Sizes = append(c.st.Sizes, int32(size))
	}
	c.st.Total = int32(len(targets))
	log.FromContext(ctx).Info("Canary started", "from", spec.From, "total", len(targets), "sizes", c.st.Sizes)
	return nil
}

// parse checks spec.canary and reads its waves.
func (c *canaryRun) parse() ([]canary.Wave, error) {
	spec := c.iop.Spec.Canary
	if spec.From == c.iop.Name {
		return nil, fmt.Errorf("from is %s, this operator itself", spec.From)
	}
	waves := []canary.Wave{{Percent: 100}}
	if len(spec.Waves) > 0 {
		var err error
		if waves, err = canary.ParseWaves(strings.Join(spec.Waves, ",")); err != nil {
			return nil, fmt.Errorf("waves: %w", err)
		}
	}
	if _, err := selector(spec); err != nil {
		return nil, fmt.Errorf("selector: %w", err)
	}
	if spec.WaveTimeout != nil && spec.WaveTimeout.Duration <= 0 {
		return nil, fmt.Errorf("waveTimeout must be positive, got %s", spec.WaveTimeout.Duration)
	}
	return waves, nil
}

// selector is the label selector of spec: everything when it sets none.
func selector(spec *camelv1alpha1.CanarySpec) (labels.Selector, error) {
	if spec.Selector == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(spec.Selector)
}

// remaining lists what of the selection the operator moved from still
// has, sorted by reference, as the waves take it.
func (c *canaryRun) remaining(ctx context.Context) ([]reassign.Target, error) {
	spec := &c.st.Spec
	sel, err := selector(spec)
	if err != nil {
		return nil, err
	}
	targets, err := reassign.List(ctx, c.r.Direct, "", spec.From, reassign.Selector(spec.From, sel))
	if err != nil {
		return nil, err
	}
	slices.SortFunc(targets, func(a, b reassign.Target) int { return strings.Compare(a.Ref(), b.Ref()) })
	return targets, nil
}

// step takes the canary one step further from where its status says it
// stands.
func (c *canaryRun) step(ctx context.Context) (reconcile.Result, error) {
	switch c.st.Phase {
	case camelv1alpha1.CanaryPhaseProgressing:
		if len(c.st.Current) == 0 {
			return c.nextWave(ctx)
		}
		return c.awaitWave(ctx)
	case camelv1alpha1.CanaryPhaseRollingBack:
		return c.awaitRollback(ctx)
	}
	return reconcile.Result{}, nil // final until spec.canary changes
}

// nextWave plans the next wave, after the pause, or ends the canary as succeeded when none is left.
// It names in status the resources of the operator moved from that the wave moves, which the next
// step moves.
func (c *canaryRun) nextWave(ctx context.Context) (reconcile.Result, error) {
	st := c.st
	if int(st.Wave) >= len(st.Sizes) {
		st.Phase = camelv1alpha1.CanaryPhaseSucceeded
		st.Message = fmt.Sprintf("moved %d from %s in %d waves", st.Moved, st.Spec.From, len(st.Sizes))
		return reconcile.Result{}, nil
	}
	if st.NextWaveTime != nil && c.now.Before(st.NextWaveTime.Time) {
		return reconcile.Result{RequeueAfter: st.NextWaveTime.Sub(c.now)}, nil
	}
	targets, err := c.remaining(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	want := int(st.Sizes[st.Wave] - st.Moved)
	targets = targets[:min(want, len(targets))]
	st.Wave++
	st.NextWaveTime = nil
	st.WaveStartTime = &metav1.Time{Time: c.now}
	st.Current = nil
	for _, t := range targets {
		st.Current = append(st.Current, t.Ref())
	}
	st.Message = fmt.Sprintf("wave %d/%d: moving %d to %s (%d of %d)", st.Wave, len(st.Sizes), len(targets), c.iop.Name,
		int(st.Moved)+len(targets), st.Total)
	log.FromContext(ctx).Info("Canary wave planned", "wave", st.Wave, "resources", len(targets))
	return reconcile.Result{RequeueAfter: nextStep}, nil
}

// awaitWave moves what of the wave has not moved yet, then waits until
// its integrations run under this operator: then the wave is done. One
// that fails, in Error or past the wave's timeout, ends the canary, and
// with rollbackOnFailure the wave moves back.
func (c *canaryRun) awaitWave(ctx context.Context) (reconcile.Result, error) {
	st := c.st
	running, failure, err := c.moveAndCheck(ctx, st.Spec.From, c.iop.Name)
	if err != nil {
		return reconcile.Result{}, err
	}
	if failure == "" && running == len(st.Current) {
		st.Moved += int32(len(st.Current))
		st.Message = fmt.Sprintf("wave %d/%d: %d running under %s after %s", st.Wave, len(st.Sizes), len(st.Current), c.iop.Name,
			c.now.Sub(st.WaveStartTime.Time).Round(time.Second))
		st.Current = nil
		if pause := st.Spec.Pause; pause != nil && pause.Duration > 0 && int(st.Wave) < len(st.Sizes) {
			st.NextWaveTime = &metav1.Time{Time: c.now.Add(pause.Duration)}
			return reconcile.Result{RequeueAfter: pause.Duration}, nil
		}
		return reconcile.Result{RequeueAfter: nextStep}, nil
	}
	if failure == "" && c.now.Sub(st.WaveStartTime.Time) > c.waveTimeout() {
		failure = fmt.Sprintf("%d/%d running under %s after %s", running, len(st.Current), c.iop.Name, c.waveTimeout())
	}
	if failure == "" {
		st.Message = fmt.Sprintf("wave %d/%d: %d/%d running under %s", st.Wave, len(st.Sizes), running, len(st.Current), c.iop.Name)
		return reconcile.Result{RequeueAfter: canaryEvery}, nil
	}
	st.Failure = fmt.Sprintf("wave %d/%d failed: %s; %d moved to %s in earlier waves", st.Wave, len(st.Sizes), failure, st.Moved, c.iop.Name)
	st.Message = st.Failure
	log.FromContext(ctx).Info("Canary wave failed", "wave", st.Wave, "cause", failure)
	if !st.Spec.RollbackOnFailure {
		st.Phase = camelv1alpha1.CanaryPhaseFailed
		st.Message += fmt.Sprintf("; the %d of this wave stay on %s (rollbackOnFailure moves them back)", len(st.Current), c.iop.Name)
		return reconcile.Result{}, nil
	}
	st.Phase = camelv1alpha1.CanaryPhaseRollingBack
	st.WaveStartTime = &metav1.Time{Time: c.now}
	return reconcile.Result{RequeueAfter: nextStep}, nil
}

// awaitRollback moves the failed wave back to the operator it came from
// and waits until its integrations run there again.
func (c *canaryRun) awaitRollback(ctx context.Context) (reconcile.Result, error) {
	st := c.st
	running, failure, err := c.moveAndCheck(ctx, c.iop.Name, st.Spec.From)
	if err != nil {
		return reconcile.Result{}, err
	}
	cause := st.Failure
	switch {
	case failure == "" && running == len(st.Current):
		st.Phase = camelv1alpha1.CanaryPhaseRolledBack
		st.Message = fmt.Sprintf("%s; the %d of this wave are back on %s", cause, len(st.Current), st.Spec.From)
		return reconcile.Result{}, nil
	case failure != "" || c.now.Sub(st.WaveStartTime.Time) > c.waveTimeout():
		if failure == "" {
			failure = fmt.Sprintf("%d/%d running under %s after %s", running, len(st.Current), st.Spec.From, c.waveTimeout())
		}
		st.Phase = camelv1alpha1.CanaryPhaseFailed
		st.Message = fmt.Sprintf("%s; moving the wave back to %s failed too: %s", cause, st.Spec.From, failure)
		return reconcile.Result{}, nil
	}
	st.Message = fmt.Sprintf("%s; moving back: %d/%d running under %s", cause, running, len(st.Current), st.Spec.From)
	return reconcile.Result{RequeueAfter: canaryEvery}, nil
}

// moveAndCheck moves each resource of the current wave that operator
// from still has to operator to, then counts those whose integration
// runs under to. failure names those in Error there, "" when none.
func (c *canaryRun) moveAndCheck(ctx context.Context, from, to string) (running int, failure string, err error) {
	var failed []string
	for _, ref := range c.st.Current {
		t, err := reassign.ParseRef(ref)
		if err != nil {
			return 0, "", err
		}
		it, err := c.moveAndRead(ctx, t, from, to)
		if err != nil {
			return 0, "", err
		}
		switch {
		case it == nil, !reassign.Settled(it, to):
		case it.Status.Phase == camelv1.IntegrationPhaseRunning:
			running++
		default:
			failed = append(failed, fmt.Sprintf("%s in phase %s", t, it.Status.Phase))
		}
	}
	if len(failed) > 0 {
		failure = fmt.Sprintf("under %s: %s", to, strings.Join(failed, ", "))
	}
	return running, failure, nil
}

// moveAndRead moves t to operator to when it is still assigned to from,
// and returns the integration that shows whether it runs, nil when that
// is gone. An integration is read once: the one read gives both its
// assignment and its phase. A resource moved elsewhere by someone else is
// left alone.
func (c *canaryRun) moveAndRead(ctx context.Context, t reassign.Target, from, to string) (*camelv1.Integration, error) {
	it := &camelv1.Integration{}
	if t.Kind.GVK != camelv1.GroupVersion.WithKind("Integration") {
		err := c.r.Direct.Get(ctx, client.ObjectKeyFromObject(t.Obj), t.Obj)
		if err == nil {
			err = c.moveIfStill(ctx, t, from, to)
		}
		if client.IgnoreNotFound(err) != nil {
			return nil, err
		}
		if err := c.r.Direct.Get(ctx, t.Integration(), it); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		return it, nil
	}
	if err := c.r.Direct.Get(ctx, t.Integration(), it); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	it.ObjectMeta.DeepCopyInto(&t.Obj.ObjectMeta)
	// An integration moved now names from in what was read, so it counts
	// at the next check, once its new owner has taken it.
	return it, c.moveIfStill(ctx, t, from, to)
}

// moveIfStill moves t, as read, to operator to when it is still assigned to from. A resource
// deleted meanwhile, or moved elsewhere by someone else, is left alone.
func (c *canaryRun) moveIfStill(ctx context.Context, t reassign.Target, from, to string) error {
	if t.Obj.Annotations[camelv1.OperatorIDAnnotation] != from {
		return nil
	}
	_, err := reassign.Move(ctx, c.r.Direct, t, from, to)
	if apierrors.IsNotFound(err) || errors.As(err, new(*reassign.MovedError)) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("moving %s to %s: %w", t, to, err)
	}
	return nil
}

// waveTimeout is spec.canary.waveTimeout, or its default.
func (c *canaryRun) waveTimeout() time.Duration {
	if t := c.st.Spec.WaveTimeout; t != nil {
		return t.Duration
	}
	return defaultWaveTimeout
}

// report sets the Canary condition, and Reconciling or Stalled with it,
// from where the canary stands.
func (c *canaryRun) report() {
	st := c.st
	status, progress, reason := metav1.ConditionFalse, controller.InProgress, ReasonCanaryMoving
	switch {
	case st.Phase == camelv1alpha1.CanaryPhaseSucceeded:
		status, progress, reason = metav1.ConditionTrue, controller.Current, ReasonCanarySucceeded
	case st.Phase == camelv1alpha1.CanaryPhaseRolledBack:
		progress, reason = controller.Stuck, ReasonCanaryRolledBack
	case st.Phase == camelv1alpha1.CanaryPhaseFailed && len(st.Sizes) == 0:
		progress, reason = controller.Stuck, ReasonCanaryInvalid
	case st.Phase == camelv1alpha1.CanaryPhaseFailed:
		progress, reason = controller.Stuck, ReasonCanaryFailed
	case st.Phase == camelv1alpha1.CanaryPhaseRollingBack:
		reason = ReasonCanaryRollingBack
	case st.NextWaveTime != nil:
		reason = ReasonCanaryPaused
	}
	message := st.Message
	if message == "" {
		message = fmt.Sprintf("the canary from %s starts", st.Spec.From)
	}
	controller.SetProgressOf(&c.iop.Status.Conditions, camelv1alpha1.ConditionCanary, c.iop.Generation, status, progress, reason, message)
}
