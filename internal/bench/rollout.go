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
)

const (
	floorNamespace   = "bench-floor"
	bareNamespace    = "bench-bare"
	rolloutNamespace = "bench-rollout"
)

// RolloutResult holds the rollout scenario's figures.
type RolloutResult struct {
	Integrations int `json:"integrations"`
	Operators    int `json:"operators"`
	// AdmissionPolicies tells whether the API server mirrored the
	// operator-id label (the policies of `caravan install`) or the
	// operators did.
	AdmissionPolicies bool `json:"admissionPolicies"`
	// Flows tells whether the integrations had flows (a ConfigMap each)
	// rather than being sourceless pre-built images.
	Flows bool `json:"flows,omitempty"`
	// FloorSeconds and CaravanSeconds run from the start of the creation
	// burst to the moment the last object was ready; Ratio is Caravan's
	// over the floor's.
	FloorSeconds   float64 `json:"floorSeconds"`
	CaravanSeconds float64 `json:"caravanSeconds"`
	Ratio          float64 `json:"ratio"`
	// Bare is the same rollout, in the same run, of integrations run by
	// the bare operator: the least an operator can do (see bareOperator).
	Bare BareRollout `json:"bare"`
	// Runs are the times of every run, in order, when the rollout ran
	// more than once; the other figures are those of the run whose ratio
	// is the median.
	Runs []RolloutRun `json:"runs,omitempty"`
	// FloorCreateSeconds and CaravanCreateSeconds are how long the bursts
	// of creations took.
	FloorCreateSeconds   float64 `json:"floorCreateSeconds"`
	CaravanCreateSeconds float64 `json:"caravanCreateSeconds"`
	// WritesByKind are all operators' writes per integration, by "verb
	// resource", from the API server's audit log.
	WritesByKind map[string]float64 `json:"writesByKind"`
	PerOperator  []OperatorFigures  `json:"perOperator"`
	All          OperatorFigures    `json:"all"`
	FloorCurve   []Point            `json:"floorCurve"`
	CaravanCurve []Point            `json:"caravanCurve"`
	// FloorControlPlaneCPU and CaravanControlPlaneCPU are the CPU
	// seconds each process of the local cluster (etcd, kube-apiserver,
	// ...) used from the burst until all were ready.
	FloorControlPlaneCPU   map[string]float64 `json:"floorControlPlaneCPU"`
	CaravanControlPlaneCPU map[string]float64 `json:"caravanControlPlaneCPU"`
	// FloorBenchCPU and CaravanBenchCPU are the CPU seconds the bench
	// itself (its watches and clients) used over the same periods, on the
	// same cores.
	FloorBenchCPU   float64 `json:"floorBenchCPU"`
	CaravanBenchCPU float64 `json:"caravanBenchCPU"`
	// DeploymentsCurve is when the Deployments that Caravan made rolled
	// out, in the same run: the gap to CaravanCurve is the time the
	// operators took to see it and report the integrations Ready.
	DeploymentsCurve []Point `json:"deploymentsCurve"`
	// APIServerCPUByWork splits the API server's CPU over the same
	// periods by kind of work, from its CPU profiles (written next to
	// bench.json as apiserver-floor.pprof, apiserver-bare.pprof and
	// apiserver-caravan.pprof;
	// the operators' merged profiles of the Caravan phase are
	// operators-caravan.pprof).
	APIServerCPUByWork []WorkShare `json:"apiServerCPUByWork"`
	floorProfile       *profile.Profile
	bareProfile        *profile.Profile
	caravanProfile     *profile.Profile
	operatorsProfile   *profile.Profile
}

// BareRollout is the rollout's phase run by the bare operator.
type BareRollout struct {
	// Seconds runs from the start of the burst to the moment the last
	// integration was Ready; Ratio is over the floor's.
	Seconds float64 `json:"seconds"`
	Ratio   float64 `json:"ratio"`
	// DeploymentsSeconds is when the last of its Deployments had rolled
	// out, DeploymentsRatio the same over the floor's.
	DeploymentsSeconds float64 `json:"deploymentsSeconds"`
	DeploymentsRatio   float64 `json:"deploymentsRatio"`
	CreateSeconds      float64 `json:"createSeconds"`
	// WritesByKind are the bare operator's writes per integration, by
	// "verb resource[/subresource]", from the API server's audit log.
	WritesByKind map[string]float64 `json:"writesByKind"`
	Curve        []Point            `json:"curve"`
	// ControlPlaneCPU is by process; BenchCPU is the bench's own, the
	// bare operator's included (it runs in the bench).
	ControlPlaneCPU map[string]float64 `json:"controlPlaneCPU"`
	BenchCPU        float64            `json:"benchCPU"`
}

// RolloutRun is what one run of the rollout took.
type RolloutRun struct {
	FloorSeconds   float64 `json:"floorSeconds"`
	CaravanSeconds float64 `json:"caravanSeconds"`
	Ratio          float64 `json:"ratio"`
	BareSeconds    float64 `json:"bareSeconds"`
	BareRatio      float64 `json:"bareRatio"`
}

// runRollouts runs the rollout runs times on the same cluster and returns
// the run whose ratio is the median (the lower of the two middle ones),
// with the times of all runs: one run's ratio moves by a quarter from one
// run to the next on a shared machine.
func runRollouts(ctx context.Context, e *env, ops []*Operator, n, runs int) (*RolloutResult, error) {
	if runs == 1 {
		return runRollout(ctx, e, ops, n)
	}
	results := make([]*RolloutResult, 0, runs)
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
func medianRun(results []*RolloutResult) *RolloutResult {
	all := make([]RolloutRun, len(results))
	for i, r := range results {
		all[i] = RolloutRun{FloorSeconds: r.FloorSeconds, CaravanSeconds: r.CaravanSeconds, Ratio: r.Ratio,
			BareSeconds: r.Bare.Seconds, BareRatio: r.Bare.Ratio}
	}
	sorted := slices.SortedStableFunc(slices.Values(results), func(a, b *RolloutResult) int { return cmp.Compare(a.Ratio, b.Ratio) })
	median := sorted[(len(sorted)-1)/2]
	median.Runs = all
	return median
}

// runRollout measures the floor, N Deployments alone with Caravan's pod
// template, then N pre-built-image integrations (sourceless or, with
// e.rolloutFlows, with flows) spread round-robin over Caravan's
// operators, then the same run by the bare operator, each created in one
// burst on the same cluster.
func runRollout(ctx context.Context, e *env, ops []*Operator, n int) (*RolloutResult, error) {
	res := &RolloutResult{Integrations: n, Operators: len(ops), AdmissionPolicies: !e.skipAdmission, Flows: e.rolloutFlows}
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
		b.Annotations[camelv1.OperatorIDAnnotation] = BareID
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
	res.Ratio = round3(ratio(res.CaravanSeconds, res.FloorSeconds))
	res.Bare.Ratio = round3(ratio(res.Bare.Seconds, res.FloorSeconds))
	res.Bare.DeploymentsRatio = round3(ratio(res.Bare.DeploymentsSeconds, res.FloorSeconds))
	floor, err := cpuByWork(res.floorProfile)
	if err != nil {
		return nil, err
	}
	bare, err := cpuByWork(res.bareProfile)
	if err != nil {
		return nil, err
	}
	caravan, err := cpuByWork(res.caravanProfile)
	if err != nil {
		return nil, err
	}
	res.APIServerCPUByWork = workShares(caravan, bare, floor)
	return res, nil
}

func runFloor(ctx context.Context, e *env, its []*camelv1.Integration, res *RolloutResult) error {
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
	w, err := newWatcher(ctx, e.config, floorNamespace, &appsv1.Deployment{})
	if err != nil {
		return err
	}
	defer w.stop()
	t, err := w.track(ctx, w.deploymentReady(floorNamespace), nil)
	if err != nil {
		return err
	}
	defer t.stop()
	fmt.Fprintf(e.progress, "rollout: floor, %d Deployments in one burst\n", len(deps))
	ph, err := e.measureBurst(ctx, t, deps, "the floor's Deployments", "ready", nil)
	if err != nil {
		return err
	}
	res.FloorCreateSeconds, res.FloorSeconds = ph.createSeconds, ph.seconds
	res.FloorControlPlaneCPU, res.FloorBenchCPU, res.floorProfile = ph.controlPlaneCPU, ph.benchCPU, ph.profile
	res.FloorCurve = Curve(ph.start, values(t.times()))
	fmt.Fprintf(e.progress, "rollout: floor ready in %.1fs; deleting it\n", res.FloorSeconds)
	return e.deleteNamespace(ctx, floorNamespace)
}

// trackRollout watches the Integrations and Deployments of namespace and
// tracks when each integration is Ready (t, with a sweep of the API server
// as a safety net) and when each Deployment has rolled out (deployed);
// stop ends the watches.
func (e *env) trackRollout(ctx context.Context, namespace string) (t, deployed *tracker, stop func(), err error) {
	w, err := newWatcher(ctx, e.config, namespace, &camelv1.Integration{}, &appsv1.Deployment{})
	if err != nil {
		return nil, nil, nil, err
	}
	if t, err = w.track(ctx, w.integrationReady(namespace), nil); err != nil {
		w.stop()
		return nil, nil, nil, err
	}
	t.sweep = readyIntegrations(e.client, namespace)
	if deployed, err = w.track(ctx, w.deploymentReady(namespace), nil); err != nil {
		t.stop()
		w.stop()
		return nil, nil, nil, err
	}
	return t, deployed, func() { deployed.stop(); t.stop(); w.stop() }, nil
}

// runBareRollout measures objs, integrations of bareNamespace assigned to
// BareID, run by the bare operator.
func runBareRollout(ctx context.Context, e *env, objs []client.Object, res *RolloutResult) error {
	if err := e.createNamespace(ctx, bareNamespace); err != nil {
		return err
	}
	cfg, err := e.cluster.UserConfig(bareUser, operatorGroup)
	if err != nil {
		return err
	}
	stopOperator, err := StartBareOperator(ctx, cfg, bareNamespace)
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
	b.ControlPlaneCPU, b.BenchCPU, res.bareProfile = ph.controlPlaneCPU, ph.benchCPU, ph.profile
	b.Curve = Curve(ph.start, values(t.times()))
	if last := deployed.last(); !last.IsZero() {
		b.DeploymentsSeconds = round3(last.Sub(ph.start).Seconds())
	}
	kinds, err := writesByKind(e.cluster.AuditLogPath(), bareNamespace, bareUser, ph.start)
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

func runCaravanRollout(ctx context.Context, e *env, ops []*Operator, its []*camelv1.Integration, res *RolloutResult) error {
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
	res.CaravanControlPlaneCPU, res.CaravanBenchCPU, res.caravanProfile = ph.controlPlaneCPU, ph.benchCPU, ph.profile
	res.operatorsProfile = ph.operatorsProfile
	res.CaravanCurve = Curve(ph.start, values(t.times()))
	res.DeploymentsCurve = Curve(ph.start, values(deployed.times()))
	after, err := scrapeAll(ctx, ops)
	if err != nil {
		return err
	}
	byName, err := eventsByRegarding(ctx, e.client, rolloutNamespace)
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
	res.All = totals(res.PerOperator)
	// The namespace is the same in every run: the writes are this run's.
	kinds, err := writesByKind(e.cluster.AuditLogPath(), rolloutNamespace, operatorUserPrefix, ph.start)
	if err != nil {
		return err
	}
	res.WritesByKind = perIntegration(kinds, len(its))
	fmt.Fprintf(e.progress, "rollout: Caravan ready in %.1fs; deleting the integrations\n", res.CaravanSeconds)
	return e.deleteNamespace(ctx, rolloutNamespace)
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
}

// measureBurst creates objs in one burst and waits until t has them all
// done (what names them, done their state, in the progress lines), while
// it measures the time, the CPU of the control plane and of the bench,
// and the CPU profiles of the API server and of ops.
func (e *env) measureBurst(ctx context.Context, t *tracker, objs []client.Object, what, done string, ops []*Operator) (*phase, error) {
	cpu, err := e.controlPlaneCPU()
	if err != nil {
		return nil, err
	}
	self, err := processCPU(os.Getpid())
	if err != nil {
		return nil, err
	}
	api, err := apiServerProfiles(e.config)
	if err != nil {
		return nil, err
	}
	apiProf := startProfile(ctx, api)
	opProfs := make([]*profiler, len(ops))
	for i, op := range ops {
		opProfs[i] = startProfile(ctx, operatorProfiles(op))
	}
	ph, err := e.burst(ctx, t, objs, what, done, cpu, self)
	if err != nil {
		errs := []error{err, discard(apiProf)}
		for _, p := range opProfs {
			errs = append(errs, discard(p))
		}
		return nil, errors.Join(errs...)
	}
	if ph.profile, err = apiProf.stop(); err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return ph, nil
	}
	merged := make([]*profile.Profile, len(opProfs))
	for i, p := range opProfs {
		if merged[i], err = p.stop(); err != nil {
			return nil, err
		}
	}
	if ph.operatorsProfile, err = profile.Merge(merged); err != nil {
		return nil, err
	}
	return ph, nil
}

// burst is measureBurst without the profile: cpu and self are the CPU
// readings of the control plane and of the bench before it.
func (e *env) burst(ctx context.Context, t *tracker, objs []client.Object, what, done string, cpu map[string]float64, self float64) (*phase, error) {
	ph := &phase{start: time.Now()}
	if err := createAll(ctx, e.client, objs); err != nil {
		return nil, err
	}
	ph.createSeconds = round3(time.Since(ph.start).Seconds())
	if err := t.wait(ctx, len(objs), what, e.report(done)); err != nil {
		return nil, err
	}
	t.warnMissed(e.progress, what)
	ph.seconds = round3(t.last().Sub(ph.start).Seconds())
	var err error
	if ph.controlPlaneCPU, err = e.controlPlaneCPUSince(cpu); err != nil {
		return nil, err
	}
	if ph.benchCPU, err = cpuSince(self); err != nil {
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
func perIntegration(counts map[string]int, n int) map[string]float64 {
	out := make(map[string]float64, len(counts))
	for k, v := range counts {
		out[k] = round3(float64(v) / float64(n))
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
