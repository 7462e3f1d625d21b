package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/google/pprof/profile"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/bench/bareoperator"
	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/bench/result"
)

const (
	floorNamespace   = "bench-floor"
	bareNamespace    = "bench-bare"
	rolloutNamespace = "bench-rollout"
)

// bareUser is the bare operator's user name.
const bareUser = "caravan:bare:" + bareoperator.ID

// runRollouts runs the rollout runs times on the same cluster and returns
// the median run, with the times of all runs. The median run is the one
// whose ratio is the median (the lower of the two middle ones): one run's
// ratio moves by a quarter from one run to the next on a shared machine.
func runRollouts(ctx context.Context, e *env, ops []*Operator, n, runs int) (*result.Rollout, error) {
	if runs == 1 {
		return runRollout(ctx, e, ops, n)
	}
	results := make([]*result.Rollout, 0, runs)
	for i := range runs {
		fmt.Fprintf(e.progress, "rollout: run %d of %d\n", i+1, runs)
		r, err := runRollout(ctx, e, ops, n)
		if err != nil {
			return nil, fmt.Errorf("run %d of %d: %w", i+1, runs, err)
		}
		results = append(results, r)
	}
	return medianRun(results), nil
}

// medianRun returns the result whose ratio is the median (the lower of
// the two middle ones), with the times of all results in their order.
func medianRun(results []*result.Rollout) *result.Rollout {
	all := make([]result.RolloutRun, len(results))
	for i, r := range results {
		all[i] = result.RolloutRun{FloorSeconds: r.FloorSeconds, CaravanSeconds: r.CaravanSeconds, Ratio: r.Ratio,
			BareSeconds: r.Bare.Seconds, BareRatio: r.Bare.Ratio, OperatorsCPUSeconds: r.All.CPUSeconds}
	}
	sorted := slices.SortedStableFunc(slices.Values(results), func(a, b *result.Rollout) int { return cmp.Compare(a.Ratio, b.Ratio) })
	median := sorted[(len(sorted)-1)/2]
	median.Runs = all
	return median
}

// runRollout measures the floor, Caravan and the bare operator, each in one burst on one cluster.
// The floor is N Deployments alone with Caravan's pod template; Caravan runs N pre-built-image
// integrations (sourceless or, with e.rolloutFlows, with flows) round-robin over its operators;
// the bare operator runs the same N.
func runRollout(ctx context.Context, e *env, ops []*Operator, n int) (*result.Rollout, error) {
	res := &result.Rollout{Integrations: n, Operators: len(ops), AdmissionPolicies: !e.skipAdmission, Flows: e.rolloutFlows}
	its := make([]*camelv1.Integration, n)
	for i := range its {
		name, id := fmt.Sprintf("it-%05d", i), ops[i%len(ops)].ID
		if e.rolloutFlows {
			its[i] = newIntegration(rolloutNamespace, name, id, 1, Image)
		} else {
			its[i] = prebuilt(rolloutNamespace, name, id, 1)
		}
	}
	if err := runFloor(ctx, e, its, res); err != nil {
		return nil, err
	}
	// Copied before Caravan's burst, which writes what the API server
	// answers (resourceVersion, uid, labels) into its objects.
	bareObjs := make([]client.Object, len(its))
	for i, it := range its {
		b := it.DeepCopy()
		b.Namespace = bareNamespace
		b.Annotations[camelv1.OperatorIDAnnotation] = bareoperator.ID
		bareObjs[i] = b
	}
	if err := runCaravanRollout(ctx, e, ops, its, res); err != nil {
		return nil, err
	}
	// After Caravan's: a phase that comes later finds more in etcd (the
	// Events of the phases before live an hour), so the bare operator's
	// figure errs on the slow side, not Caravan's.
	if err := runBareRollout(ctx, e, bareObjs, res); err != nil {
		return nil, err
	}
	res.Ratio = measure.Round3(measure.Ratio(res.CaravanSeconds, res.FloorSeconds))
	res.Bare.Ratio = measure.Round3(measure.Ratio(res.Bare.Seconds, res.FloorSeconds))
	res.Bare.DeploymentsRatio = measure.Round3(measure.Ratio(res.Bare.DeploymentsSeconds, res.FloorSeconds))
	floor, err := measure.CPUByWork(res.FloorProfile)
	if err != nil {
		return nil, err
	}
	bare, err := measure.CPUByWork(res.BareProfile)
	if err != nil {
		return nil, err
	}
	caravan, err := measure.CPUByWork(res.CaravanProfile)
	if err != nil {
		return nil, err
	}
	res.APIServerCPUByWork = measure.WorkShares(caravan, bare, floor)
	return res, nil
}

func runFloor(ctx context.Context, e *env, its []*camelv1.Integration, res *result.Rollout) error {
	if err := e.createNamespace(ctx, floorNamespace); err != nil {
		return err
	}
	var cms, deps []client.Object
	for _, it := range its {
		floor := it.DeepCopy()
		floor.Namespace = floorNamespace
		cm, dep, err := floorObjects(floor)
		if err != nil {
			return err
		}
		if cm != nil {
			cms = append(cms, cm)
		}
		deps = append(deps, dep)
	}
	// The ConfigMaps the pods mount exist before the burst: the floor is
	// the Deployments alone.
	if err := createAll(ctx, e.client, cms); err != nil {
		return err
	}
	w, err := measure.NewWatcher(ctx, e.config, floorNamespace, &appsv1.Deployment{})
	if err != nil {
		return err
	}
	defer w.Stop()
	t, err := w.Track(ctx, w.DeploymentReady(floorNamespace), nil)
	if err != nil {
		return err
	}
	defer t.Stop()
	fmt.Fprintf(e.progress, "rollout: floor, %d Deployments in one burst\n", len(deps))
	ph, err := e.measureBurst(ctx, t, deps, "the floor's Deployments", "ready", nil)
	if err != nil {
		return err
	}
	res.FloorCreateSeconds, res.FloorSeconds = ph.createSeconds, ph.seconds
	res.FloorControlPlaneCPU, res.FloorBenchCPU, res.FloorProfile = ph.controlPlaneCPU, ph.benchCPU, ph.profile
	res.FloorWatchEvents = perIntegration(ph.watchEvents, len(deps))
	res.FloorCurve = measure.Curve(ph.start, values(t.Times()))
	fmt.Fprintf(e.progress, "rollout: floor ready in %.1fs; deleting it\n", res.FloorSeconds)
	return e.deleteNamespace(ctx, floorNamespace)
}

// trackRollout tracks when each integration of namespace is Ready and its Deployment rolled out.
// t tracks the integrations, with a sweep of the API server as a safety net; deployed the
// Deployments. stop ends the watches.
func (e *env) trackRollout(ctx context.Context, namespace string) (t, deployed *measure.Tracker, stop func(), err error) {
	w, err := measure.NewWatcher(ctx, e.config, namespace, &camelv1.Integration{}, &appsv1.Deployment{})
	if err != nil {
		return nil, nil, nil, err
	}
	if t, err = w.Track(ctx, w.IntegrationReady(namespace), nil); err != nil {
		w.Stop()
		return nil, nil, nil, err
	}
	t.Sweep = measure.ReadyIntegrations(e.client, namespace)
	if deployed, err = w.Track(ctx, w.DeploymentReady(namespace), nil); err != nil {
		t.Stop()
		w.Stop()
		return nil, nil, nil, err
	}
	return t, deployed, func() { deployed.Stop(); t.Stop(); w.Stop() }, nil
}

// runBareRollout measures objs, integrations of bareNamespace assigned to
// bareoperator.ID, run by the bare operator.
func runBareRollout(ctx context.Context, e *env, objs []client.Object, res *result.Rollout) error {
	if err := e.createNamespace(ctx, bareNamespace); err != nil {
		return err
	}
	cfg, err := e.cluster.UserConfig(bareUser, operatorGroup)
	if err != nil {
		return err
	}
	stopOperator, err := bareoperator.Start(ctx, cfg, bareNamespace)
	if err != nil {
		return err
	}
	defer stopOperator()
	t, deployed, stopTracking, err := e.trackRollout(ctx, bareNamespace)
	if err != nil {
		return err
	}
	defer stopTracking()
	fmt.Fprintf(e.progress, "rollout: the bare operator, %d integrations in one burst\n", len(objs))
	ph, err := e.measureBurst(ctx, t, objs, "the bare operator's integrations", "Ready", nil)
	if err != nil {
		return err
	}
	b := &res.Bare
	b.CreateSeconds, b.Seconds = ph.createSeconds, ph.seconds
	b.ControlPlaneCPU, b.BenchCPU, res.BareProfile = ph.controlPlaneCPU, ph.benchCPU, ph.profile
	b.WatchEvents = perIntegration(ph.watchEvents, len(objs))
	b.Curve = measure.Curve(ph.start, values(t.Times()))
	if last := deployed.Last(); !last.IsZero() {
		b.DeploymentsSeconds = measure.Round3(last.Sub(ph.start).Seconds())
	}
	kinds, err := measure.WritesByKind(e.cluster.AuditLogPath(), bareNamespace, bareUser, ph.start)
	if err != nil {
		return err
	}
	b.WritesByKind = perIntegration(kinds, len(objs))
	fmt.Fprintf(e.progress, "rollout: the bare operator ready in %.1fs; deleting its integrations\n", b.Seconds)
	// Stopped first: it would recreate the Deployments that the garbage
	// collector removes before their integrations.
	stopOperator()
	return e.deleteNamespace(ctx, bareNamespace)
}

func runCaravanRollout(ctx context.Context, e *env, ops []*Operator, its []*camelv1.Integration, res *result.Rollout) error {
	if err := e.createNamespace(ctx, rolloutNamespace); err != nil {
		return err
	}
	t, deployed, stopTracking, err := e.trackRollout(ctx, rolloutNamespace)
	if err != nil {
		return err
	}
	defer stopTracking()
	objs := make([]client.Object, len(its))
	owner := map[string]int{}
	owned := make([]int, len(ops))
	for i, it := range its {
		objs[i] = it
		owner[it.Name] = i % len(ops)
		owned[i%len(ops)]++
	}
	before, err := scrapeAll(ctx, ops)
	if err != nil {
		return err
	}
	for _, op := range ops {
		op.resetPeaks()
	}
	fmt.Fprintf(e.progress, "rollout: Caravan, %d integrations over %d operators in one burst\n", len(its), len(ops))
	ph, err := e.measureBurst(ctx, t, objs, "the integrations", "Ready", ops)
	if err != nil {
		return err
	}
	res.CaravanCreateSeconds, res.CaravanSeconds = ph.createSeconds, ph.seconds
	res.CaravanControlPlaneCPU, res.CaravanBenchCPU, res.CaravanProfile = ph.controlPlaneCPU, ph.benchCPU, ph.profile
	res.CaravanWatchEvents = perIntegration(ph.watchEvents, len(its))
	res.OperatorsProfile = ph.operatorsProfile
	res.CaravanCurve = measure.Curve(ph.start, values(t.Times()))
	res.DeploymentsCurve = measure.Curve(ph.start, values(deployed.Times()))
	after, err := scrapeAll(ctx, ops)
	if err != nil {
		return err
	}
	byName, err := measure.EventsByRegarding(ctx, e.client, rolloutNamespace)
	if err != nil {
		return err
	}
	events := make([]int, len(ops))
	for name, n := range byName {
		if i, ok := owner[name]; ok {
			events[i] += n
		}
	}
	res.PerOperator = operatorFigures(ops, before, after, owned, events)
	res.All = measure.Totals(res.PerOperator)
	// The namespace is the same in every run: the writes are this run's.
	kinds, err := measure.WritesByKind(e.cluster.AuditLogPath(), rolloutNamespace, operatorUserPrefix, ph.start)
	if err != nil {
		return err
	}
	res.WritesByKind = perIntegration(kinds, len(its))
	fmt.Fprintf(e.progress, "rollout: Caravan ready in %.1fs; deleting the integrations\n", res.CaravanSeconds)
	return e.deleteNamespace(ctx, rolloutNamespace)
}

// operatorFigures turns the counters of ops before and after a
// measurement, their peaks, their shares and the Events about their
// integrations into per-integration figures.
func operatorFigures(ops []*Operator, before, after []measure.Counters, owned, events []int) []measure.OperatorFigures {
	out := make([]measure.OperatorFigures, len(ops))
	for i, op := range ops {
		out[i] = measure.OperatorFigure(op.ID, before[i], after[i], op.peaksSampled(), owned[i], events[i])
	}
	return out
}

// phase is what measureBurst measured of one phase of the rollout.
type phase struct {
	start time.Time
	// createSeconds is how long the burst of creations took; seconds runs
	// from its start until the last object was done.
	createSeconds, seconds float64
	// controlPlaneCPU (by process) and benchCPU are the CPU seconds used
	// over those seconds; profile is the API server's CPU profile.
	controlPlaneCPU map[string]float64
	benchCPU        float64
	profile         *profile.Profile
	// operatorsProfile is the operators' CPU profiles, merged.
	operatorsProfile *profile.Profile
	// watchEvents are the events the API server sent its watchers over
	// those seconds, by resource.
	watchEvents map[string]float64
}

// measureBurst creates objs in one burst and measures until t has them all done.
// It takes the time, the CPU of the control plane and of the bench, the events the API
// server sent its watchers, and the CPU profiles of the API server and of ops. what names
// the objects and done their state in the progress lines.
func (e *env) measureBurst(ctx context.Context, t *measure.Tracker, objs []client.Object, what, done string, ops []*Operator) (*phase, error) {
	cpu, err := e.controlPlaneCPU()
	if err != nil {
		return nil, err
	}
	self, err := measure.ProcessCPU(os.Getpid())
	if err != nil {
		return nil, err
	}
	watches, err := measure.APIServerWatchEvents(e.config)
	if err != nil {
		return nil, err
	}
	eventsBefore, err := watches.Read(ctx)
	if err != nil {
		return nil, err
	}
	api, err := measure.APIServerProfiles(e.config)
	if err != nil {
		return nil, err
	}
	apiProf := measure.StartProfile(ctx, api)
	var opProfs []*measure.Profiler
	if e.profileOperators {
		for _, op := range ops {
			opProfs = append(opProfs, measure.StartProfile(ctx, measure.HTTPProfiles("operator "+op.ID, op.PprofURL, e.scraper.Get)))
		}
	}
	ph, err := e.burst(ctx, t, objs, what, done, cpu, self)
	if err != nil {
		errs := []error{err, apiProf.Discard()}
		for _, p := range opProfs {
			errs = append(errs, p.Discard())
		}
		return nil, errors.Join(errs...)
	}
	if ph.profile, err = apiProf.Stop(); err != nil {
		return nil, err
	}
	eventsAfter, err := watches.Read(ctx)
	if err != nil {
		return nil, err
	}
	ph.watchEvents = measure.Increase(eventsBefore, eventsAfter)
	if len(ops) == 0 {
		return ph, nil
	}
	e.warnRestarts(ctx, ops)
	// An operator whose profile breaks off (its container restarted) is
	// left out of the operators' profile, with a warning; the figures
	// stand without it.
	var merged []*profile.Profile
	for i, p := range opProfs {
		prof, err := p.Stop()
		if err != nil {
			fmt.Fprintf(e.progress, "warning: operator %s's CPU profile is left out: %v (did its container restart? kubectl get pods -n %s)\n",
				ops[i].ID, err, operatorNamespace)
			continue
		}
		merged = append(merged, prof)
	}
	if len(merged) == 0 {
		return ph, nil
	}
	if ph.operatorsProfile, err = profile.Merge(merged); err != nil {
		return nil, err
	}
	return ph, nil
}

// warnRestarts prints a warning for each operator whose container
// restarted, with why it last ended: the figures of such a run include
// the restart.
func (e *env) warnRestarts(ctx context.Context, ops []*Operator) {
	for _, op := range ops {
		statuses, err := op.containerStatuses(ctx)
		if err != nil {
			fmt.Fprintf(e.progress, "warning: %v\n", err)
			continue
		}
		for _, cs := range statuses {
			if cs.RestartCount == 0 {
				continue
			}
			why := "unknown"
			if t := cs.LastTerminationState.Terminated; t != nil {
				why = fmt.Sprintf("%s, exit code %d", t.Reason, t.ExitCode)
			}
			fmt.Fprintf(e.progress, "warning: operator %s's container restarted %d times during the run (last: %s)\n",
				op.ID, cs.RestartCount, why)
		}
	}
}

// burst is measureBurst without the profile: cpu and self are the CPU
// readings of the control plane and of the bench before it.
func (e *env) burst(ctx context.Context, t *measure.Tracker, objs []client.Object, what, done string, cpu map[string]float64, self float64) (*phase, error) {
	ph := &phase{start: time.Now()}
	if err := createAll(ctx, e.client, objs); err != nil {
		return nil, err
	}
	ph.createSeconds = measure.Round3(time.Since(ph.start).Seconds())
	if err := t.Wait(ctx, len(objs), what, e.report(done)); err != nil {
		return nil, err
	}
	t.WarnMissed(e.progress, what)
	ph.seconds = measure.Round3(t.Last().Sub(ph.start).Seconds())
	var err error
	if ph.controlPlaneCPU, err = e.controlPlaneCPUSince(cpu); err != nil {
		return nil, err
	}
	if ph.benchCPU, err = measure.CPUSince(self); err != nil {
		return nil, err
	}
	return ph, nil
}

// report returns a progress callback that prints a count other than the
// last one it printed, at most every five seconds.
func (e *env) report(what string) func(int) {
	last, printed := time.Time{}, -1
	return func(done int) {
		if done != printed && time.Since(last) >= 5*time.Second {
			fmt.Fprintf(e.progress, "  %d %s\n", done, what)
			last, printed = time.Now(), done
		}
	}
}

// perIntegration divides counts by n.
func perIntegration[V int | float64](counts map[string]V, n int) map[string]float64 {
	out := make(map[string]float64, len(counts))
	for k, v := range counts {
		out[k] = measure.Round3(float64(v) / float64(n))
	}
	return out
}

func values(m map[string]time.Time) []time.Time {
	out := make([]time.Time, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
