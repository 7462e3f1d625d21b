// Package report prints and writes the bench's figures: one table per
// scenario that ran, bench.json, the CPU profiles the rollout took, and
// one PNG plot per scenario (gonum/plot).
package report

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/bench/result"
)

// table is a titled table of rows.
type table struct {
	Title  string
	Header []string
	Rows   [][]string
}

// Write prints the table with aligned columns.
func (t table) Write(w io.Writer) {
	fmt.Fprintf(w, "\n%s\n", t.Title)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.Header, "\t"))
	for _, r := range t.Rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	_ = tw.Flush()
}

// num prints a figure with up to two decimals and no trailing zeros.
func num(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func secs(v float64) string { return num(v) + " s" }

// WriteTables prints one table per scenario that ran, then the
// scenarios that failed.
func WriteTables(w io.Writer, res *result.Results) {
	for _, t := range tables(res) {
		t.Write(w)
	}
	for s, err := range res.Failures {
		fmt.Fprintf(w, "\n%s: FAILED: %s\n", s, err)
	}
}

// tables are the tables of the scenarios that ran.
func tables(res *result.Results) []table {
	var out []table
	if r := res.Nodes; r != nil {
		out = append(out, nodesTable(r))
	}
	if r := res.Rollout; r != nil {
		out = append(out, rolloutTable(r))
		if len(r.Runs) > 0 {
			out = append(out, runsTable(r))
		}
		out = append(out, bareTable(r))
		if len(r.FloorControlPlaneCPU) > 0 {
			out = append(out, timeAgainstCPUTable(r, res.Machine.CPUs))
		}
		out = append(out, apiServerWorkTable(r), operatorTable(r), writesTable(r))
		if len(r.CaravanWatchEvents) > 0 {
			out = append(out, watchEventsTable(r))
		}
	}
	if r := res.Share; r != nil {
		out = append(out, shareTable(r))
	}
	if r := res.Handoff; r != nil {
		out = append(out, handoffTable(fmt.Sprintf("Hand-off: %d Running integrations (%d replicas) moved %s -> %s in one burst",
			r.Integrations, r.Replicas, r.From, r.To), r, true))
	}
	if len(res.SweepIntegrations) > 0 {
		p := res.SweepIntegrations[0]
		out = append(out, sweepTable(fmt.Sprintf("Sweep over N: the rollout over %d operators, side by side with the bare operator and the floor",
			p.Operators), "N", res.SweepIntegrations))
	}
	if len(res.SweepOperators) > 0 {
		p := res.SweepOperators[0]
		out = append(out, sweepTable(fmt.Sprintf("Sweep over M: the rollout of %d integrations, side by side with the bare operator and the floor",
			p.Integrations), "M", res.SweepOperators))
	}
	if len(res.SweepRunAs) > 0 {
		p := res.SweepRunAs[0]
		out = append(out, sweepTable(fmt.Sprintf("Sweep over how the operators run, pods of the process node or processes of this machine: the rollout of %d integrations over %d operators, side by side with the bare operator and the floor",
			p.Integrations, p.Operators), "RUN AS", res.SweepRunAs))
	}
	if len(res.SweepCPULimits) > 0 {
		p := res.SweepCPULimits[0]
		out = append(out, sweepTable(fmt.Sprintf("Sweep over the operators' CPU limit: the rollout of %d integrations over %d operators, side by side with the bare operator and the floor",
			p.Integrations, p.Operators), "CPU", res.SweepCPULimits))
	}
	if r := res.Build; r != nil {
		if len(r.Kits) > 0 {
			out = append(out, kitsTable(r))
		}
		out = append(out, buildTable(r))
		if r.Move != nil {
			t := handoffTable(fmt.Sprintf("Build, then a move: the %d integrations (%d replica) moved %s -> %s in one burst; %s makes the same kits, its Maven cache empty",
				r.Integrations, r.Move.Replicas, r.Move.From, r.Move.To, r.Move.To), r.Move, false)
			t.Rows = append(t.Rows,
				[]string{"kits of " + r.Move.To + " that wrap " + r.Move.From + "'s image", strconv.Itoa(r.MoveKitsAdopted), "", "", "= " + strconv.Itoa(r.DependencySets)},
				[]string{"Builds created by " + r.Move.To, strconv.Itoa(r.MoveBuilds), "", "", "0"})
			out = append(out, t)
		}
	}
	if r := res.Runtime; r != nil {
		out = append(out, runtimeTable(r))
		if q := r.Quarkus; q != nil {
			out = append(out, providerTable(r, q))
		}
		if m := r.Move; m != nil {
			out = append(out, runtimeMoveTable(fmt.Sprintf("Runtime, moved: %d running JVMs moved %s -> %s in a canary of %d waves; %s makes the same kits",
				m.Integrations, m.From, m.To, len(m.WaveSeconds), m.To), m, true))
		}
		if m := r.Roll; m != nil {
			out = append(out, runtimeMoveTable(fmt.Sprintf("Runtime, rolled: the same moved on %s -> %s in a canary of %d waves; %s names another base image, builds its own kits, and the pods roll",
				m.From, m.To, len(m.WaveSeconds), m.To), m, false))
		}
	}
	if r := res.Admission; r != nil {
		out = append(out, admissionTable(r))
	}
	if r := res.Recovery; r != nil {
		out = append(out, table{
			Title:  fmt.Sprintf("Recovery: %d integrations for %s, its pod killed when half were created", r.Integrations, r.Operator),
			Header: []string{"READY AT THE KILL", "KILLED AFTER", "ALL READY AFTER THE KILL", "DEPLOYMENTS"},
			Rows: [][]string{{strconv.Itoa(r.ReadyAtKill), secs(r.KilledAfterSeconds), secs(r.RecoverySeconds),
				strconv.Itoa(r.Deployments)}},
		})
	}
	if r := res.Malformed; r != nil {
		out = append(out, malformedTable(r))
	}
	return out
}

// malformedTable shows the valid integrations' all-Ready time alone and
// beside malformed ones, what the malformed ones got, and the operator's
// work in each run.
func malformedTable(r *result.Malformed) table {
	t := table{
		Title: fmt.Sprintf("Malformed: %d valid integrations for %s alone, then beside %d malformed ones in one burst",
			r.Alone.Valid, r.Operator, r.Beside.Malformed),
		Header: []string{"RUN", "VALID ALL READY", "RATIO", "MALFORMED ALL STALLED", "WITH THEIR REASON", "DEPLOYMENTS",
			"RECONCILES", "RECONCILES IN THE NEXT " + secs(r.Beside.QuietSeconds), "CPU", "PEAK OWN MEMORY", "RESTARTS"},
	}
	for _, run := range []struct {
		name  string
		r     result.MalformedRun
		ratio string
	}{{"alone", r.Alone, "1"}, {"beside", r.Beside, num(r.Ratio)}} {
		stalled, reason := "", ""
		if run.r.Malformed > 0 {
			stalled = secs(run.r.MalformedStalledSeconds)
			reason = fmt.Sprintf("%d of %d", run.r.WithReason, run.r.Malformed)
		}
		t.Rows = append(t.Rows, []string{run.name, secs(run.r.ValidReadySeconds), run.ratio, stalled, reason,
			strconv.Itoa(run.r.Deployments), num(run.r.Reconciles), num(run.r.QuietReconciles), secs(run.r.CPUSeconds),
			num(run.r.PeakOwnMiB) + " MiB", strconv.Itoa(run.r.Restarts)})
	}
	return t
}

// admissionTable shows the API server's and etcd's CPU per create against
// the number of operators, each point's ratio to the first's of its kind.
func admissionTable(r *result.Admission) table {
	t := table{
		Title:  fmt.Sprintf("Admission: %d assigned Integrations created in one burst, against the operators the policies know", r.Creates),
		Header: []string{"OPERATORS", "LIMITED", "REGISTRATIONS", "BURST", "API SERVER CPU/CREATE", "RATIO", "ETCD CPU/CREATE"},
	}
	first := map[bool]float64{}
	for _, p := range r.Points {
		if _, ok := first[p.Limited]; !ok {
			first[p.Limited] = p.APIServerMillisPerCreate
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(p.Operators), strconv.FormatBool(p.Limited), strconv.Itoa(p.Registrations),
			secs(p.CreateSeconds), num(p.APIServerMillisPerCreate) + " ms", num(measure.Ratio(p.APIServerMillisPerCreate, first[p.Limited])),
			num(p.EtcdMillisPerCreate) + " ms"})
	}
	return t
}

var figureHeader = []string{"FIGURE", "CARAVAN", "FLOOR", "RATIO", "TARGET"}

func rolloutTable(r *result.Rollout) table {
	a := r.All
	t := table{
		Title: fmt.Sprintf("Rollout: %d %s integrations over %d operators, created in one burst%s",
			r.Integrations, workloadKind(r), r.Operators, admission(r)),
		Header: figureHeader,
		Rows: [][]string{
			{"all Ready" + medianOf(r), secs(r.CaravanSeconds), secs(r.FloorSeconds), num(r.Ratio) + "x", "<= 1.25x"},
			{"creation burst", secs(r.CaravanCreateSeconds), secs(r.FloorCreateSeconds), "", ""},
			{"API writes / integration (Events included)", num(a.WritesPerIntegration), "", "", "<= 5"},
			{"API reads / integration (uncached)", num(a.ReadsPerIntegration), "", "", "<= 1"},
			{"reconciles / integration", num(a.ReconcilesPerIntegration), "", "", ""},
			{"of which ended in a requeue", num(a.RequeuesPerIntegration), "", "", ""},
			{"Events / integration", num(a.EventsPerIntegration), "", "", ""},
			{"CPU, all operators", secs(a.CPUSeconds), "", "", ""},
			{"busiest operator's time in Integration reconciles", secs(a.ReconcileBusySeconds), "", "", ""},
		},
	}
	names := make([]string, 0, len(r.CaravanControlPlaneCPU))
	for name := range r.CaravanControlPlaneCPU {
		names = append(names, name)
	}
	slices.Sort(names)
	var caravan, floor float64
	for _, name := range names {
		c, f := r.CaravanControlPlaneCPU[name], r.FloorControlPlaneCPU[name]
		caravan, floor = caravan+c, floor+f
		t.Rows = append(t.Rows, []string{"CPU, " + name, secs(c), secs(f), num(measure.Round3(measure.Ratio(c, f))) + "x", ""})
	}
	if len(names) > 0 {
		t.Rows = append(t.Rows, []string{"CPU, control plane", secs(caravan), secs(floor), num(measure.Round3(measure.Ratio(caravan, floor))) + "x", ""})
	}
	t.Rows = append(t.Rows, []string{"CPU, the bench itself (watches, clients)", secs(r.CaravanBenchCPU), secs(r.FloorBenchCPU), "", ""})
	return t
}

// timeAgainstCPUTable sets each phase's time beside the CPU that every measured process used in it.
// When every phase keeps the machine's cores busy, the time ratio follows the CPU ratio, and the
// CPU per integration above the floor is what a phase must cut to come closer to it.
func timeAgainstCPUTable(r *result.Rollout, cpus int) table {
	floor := sum(r.FloorControlPlaneCPU) + r.FloorBenchCPU
	bare := sum(r.Bare.ControlPlaneCPU) + r.Bare.BenchCPU
	caravan := sum(r.CaravanControlPlaneCPU) + r.All.CPUSeconds + r.CaravanBenchCPU
	cores := func(cpu, seconds float64) string {
		return fmt.Sprintf("%s of %d", num(measure.Round3(measure.Ratio(cpu, seconds))), cpus)
	}
	above := func(cpu float64) string {
		return num(measure.Round3((cpu-floor)*1000/float64(r.Integrations))) + " ms"
	}
	ratio := func(v float64) string { return num(measure.Round3(measure.Ratio(v, floor))) + "x" }
	return table{
		Title:  "Rollout, time against CPU: every measured process (control plane, operators, the bench), per phase",
		Header: []string{"FIGURE", "CARAVAN", "BARE OPERATOR", "FLOOR"},
		Rows: [][]string{
			{"all Ready", secs(r.CaravanSeconds), secs(r.Bare.Seconds), secs(r.FloorSeconds)},
			{"CPU", secs(measure.Round3(caravan)), secs(measure.Round3(bare)), secs(measure.Round3(floor))},
			{"cores busy (CPU / all Ready)", cores(caravan, r.CaravanSeconds), cores(bare, r.Bare.Seconds), cores(floor, r.FloorSeconds)},
			{"time ratio to the floor", num(r.Ratio) + "x", num(r.Bare.Ratio) + "x", "1x"},
			{"CPU ratio to the floor", ratio(caravan), ratio(bare), "1x"},
			{"CPU per integration above the floor", above(caravan), above(bare), "0 ms"},
		},
	}
}

// sum adds the values of m.
func sum(m map[string]float64) float64 {
	var s float64
	for _, v := range m {
		s += v
	}
	return s
}

// apiServerWorkTable splits the API server's CPU by kind of work.
func apiServerWorkTable(r *result.Rollout) table {
	t := table{Title: "Rollout, API server CPU by kind of work (its CPU profiles)",
		Header: []string{"WORK", "CARAVAN", "BARE OPERATOR", "FLOOR", "CARAVAN - FLOOR"}}
	var caravan, bare, floor float64
	for _, w := range r.APIServerCPUByWork {
		caravan, bare, floor = caravan+w.Caravan, bare+w.Bare, floor+w.Floor
		t.Rows = append(t.Rows, []string{w.Work, secs(w.Caravan), secs(w.Bare), secs(w.Floor), secs(measure.Round3(w.Caravan - w.Floor))})
	}
	t.Rows = append(t.Rows, []string{"all", secs(measure.Round3(caravan)), secs(measure.Round3(bare)), secs(measure.Round3(floor)), secs(measure.Round3(caravan - floor))})
	return t
}

// medianOf says which run a rollout's figures come from when it ran more
// than once.
func medianOf(r *result.Rollout) string {
	if len(r.Runs) == 0 {
		return ""
	}
	return fmt.Sprintf(" (median of %d runs)", len(r.Runs))
}

// runsTable lists the times of every run of the rollout.
func runsTable(r *result.Rollout) table {
	t := table{Title: "Rollout, every run", Header: []string{"RUN", "CARAVAN", "FLOOR", "RATIO", "BARE OPERATOR", "RATIO"}}
	for i, run := range r.Runs {
		t.Rows = append(t.Rows, []string{strconv.Itoa(i + 1), secs(run.CaravanSeconds), secs(run.FloorSeconds), num(run.Ratio) + "x",
			secs(run.BareSeconds), num(run.BareRatio) + "x"})
	}
	return t
}

// bareTable shows what the bare operator, the least an operator can do,
// reached in the same run.
func bareTable(r *result.Rollout) table {
	b := r.Bare
	t := table{
		Title:  "Rollout, the least an operator can do (the bare operator: creates the Deployment, writes the status once), same run",
		Header: []string{"FIGURE", "BARE OPERATOR", "FLOOR", "RATIO"},
		Rows: [][]string{
			{"all Ready", secs(b.Seconds), secs(r.FloorSeconds), num(b.Ratio) + "x"},
			{"all its Deployments ready", secs(b.DeploymentsSeconds), secs(r.FloorSeconds), num(b.DeploymentsRatio) + "x"},
			{"creation burst", secs(b.CreateSeconds), secs(r.FloorCreateSeconds), ""},
		},
	}
	kinds := slices.Sorted(maps.Keys(b.WritesByKind))
	for _, k := range kinds {
		t.Rows = append(t.Rows, []string{"writes / integration: " + k, num(b.WritesByKind[k]), "", ""})
	}
	bare, floor := sum(b.ControlPlaneCPU), sum(r.FloorControlPlaneCPU)
	t.Rows = append(t.Rows,
		[]string{"CPU, control plane", secs(measure.Round3(bare)), secs(measure.Round3(floor)), num(measure.Round3(measure.Ratio(bare, floor))) + "x"},
		[]string{"CPU, the bench and the bare operator in it", secs(b.BenchCPU), secs(r.FloorBenchCPU), ""})
	return t
}

// workloadKind says what the rollout's integrations were.
func workloadKind(r *result.Rollout) string {
	if r.Flows {
		return "pre-built-image (with flows)"
	}
	return "pre-built-image (sourceless)"
}

// admission says, in a title, who mirrored the operator-id label.
func admission(r *result.Rollout) string {
	if r.AdmissionPolicies {
		return ""
	}
	return " (no admission policies: the operators mirror the operator-id label)"
}

// writesTable splits the operators' writes per integration by kind.
func writesTable(r *result.Rollout) table {
	t := table{Title: "Rollout, operators' writes per integration by kind (API server audit log)",
		Header: []string{"WRITE", "PER INTEGRATION"}}
	for _, k := range slices.Sorted(maps.Keys(r.WritesByKind)) {
		t.Rows = append(t.Rows, []string{k, num(r.WritesByKind[k])})
	}
	return t
}

// watchEventsTable shows the events the API server sent its watchers per
// integration in each phase, by resource. The resources with the most of
// Caravan's come first; those under 0.01 per integration in every phase
// are left out, but counted in the total.
func watchEventsTable(r *result.Rollout) table {
	t := table{Title: "Rollout, events the API server sent its watchers, per integration, by resource",
		Header: []string{"RESOURCE", "CARAVAN", "BARE OPERATOR", "FLOOR"}}
	phases := []map[string]float64{r.CaravanWatchEvents, r.Bare.WatchEvents, r.FloorWatchEvents}
	resources := map[string]bool{}
	for _, p := range phases {
		for k, v := range p {
			if v >= 0.01 {
				resources[k] = true
			}
		}
	}
	order := slices.SortedFunc(maps.Keys(resources), func(a, b string) int {
		if c := cmp.Compare(r.CaravanWatchEvents[b], r.CaravanWatchEvents[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for _, k := range order {
		t.Rows = append(t.Rows, []string{k, num(r.CaravanWatchEvents[k]), num(r.Bare.WatchEvents[k]), num(r.FloorWatchEvents[k])})
	}
	all := []string{"all"}
	for _, p := range phases {
		all = append(all, num(measure.Round3(measure.Total(p))))
	}
	t.Rows = append(t.Rows, all)
	return t
}

func operatorTable(r *result.Rollout) table {
	t := table{
		Title: "Rollout, per operator (per owned integration where it says so)",
		Header: []string{"OPERATOR", "OWNED", "CPU", "PEAK HEAP", "PEAK RSS", "PEAK OWN", "IDLE RSS", "IDLE OWN", "IDLE PSS",
			"RECONCILES/IT", "RECONCILING", "READS/IT", "WRITES/IT", "EVENTS/IT"},
	}
	for _, f := range append(r.PerOperator, r.All) {
		t.Rows = append(t.Rows, []string{f.ID, strconv.Itoa(f.Owned), secs(f.CPUSeconds),
			num(f.PeakHeapMiB) + " MiB", num(f.PeakRSSMiB) + " MiB", num(f.PeakOwnMiB) + " MiB",
			num(f.IdleRSSMiB) + " MiB", num(f.IdleOwnMiB) + " MiB", num(f.IdlePSSMiB) + " MiB", num(f.ReconcilesPerIntegration),
			secs(f.ReconcileBusySeconds), num(f.ReadsPerIntegration), num(f.WritesPerIntegration), num(f.EventsPerIntegration)})
	}
	return t
}

// handoffTable shows a move's figures; with targets, the hand-off
// scenario's (a move of pre-built integrations, which restarts no pod).
func handoffTable(title string, r *result.Handoff, targets bool) table {
	kinds := make([]string, 0, len(r.WritesByFromAfterReleaseByKind))
	for k, n := range r.WritesByFromAfterReleaseByKind {
		kinds = append(kinds, fmt.Sprintf("%s: %d", k, n))
	}
	slices.Sort(kinds)
	writes := strconv.Itoa(r.WritesByFromAfterRelease)
	if len(kinds) > 0 {
		writes += " (" + strings.Join(kinds, ", ") + ")"
	}
	floor := func(v float64) string {
		if len(r.FloorMoveTimes) == 0 {
			return ""
		}
		return secs(v)
	}
	ratio, target, pods := "", "", ""
	if len(r.FloorMoveTimes) > 0 {
		ratio = num(r.P99Ratio) + "x"
	}
	if targets {
		target, pods = "<= 3 s", "0"
	}
	return table{
		Title:  title,
		Header: figureHeader,
		Rows: [][]string{
			{"move time p50", secs(r.MoveSeconds.P50), floor(r.FloorMoveSeconds.P50), "", ""},
			{"move time p99", secs(r.MoveSeconds.P99), floor(r.FloorMoveSeconds.P99), ratio, target},
			{"move time max", secs(r.MoveSeconds.Max), floor(r.FloorMoveSeconds.Max), "", ""},
			{"release and adoption p50 / p99", secs(r.AdoptSeconds.P50) + " / " + secs(r.AdoptSeconds.P99), "", "", ""},
			{"all moved", secs(r.TotalSeconds), "", "", ""},
			{"min ready pods of a moved integration", strconv.Itoa(int(r.MinReadyPods)), "", "", "= " + strconv.Itoa(int(r.Replicas))},
			{"pods started by the moves", strconv.Itoa(r.PodsStarted), "", "", pods},
			{"writes by " + r.From + " for the releases (audit log)", strconv.Itoa(r.ReleaseWrites), "", "", "<= " + strconv.Itoa(2*r.Integrations)},
			{"writes by " + r.From + " after the releases (audit log)", writes, "", "", "0"},
			{fmt.Sprintf("writes by %s in %s after / before", r.From, secs(r.SettleSeconds)),
				num(r.FromWritesSettled) + " / " + num(r.FromWritesIdle), "", "", ""},
		},
	}
}

func shareTable(r *result.Share) table {
	t := table{
		Title:  fmt.Sprintf("Share: %d integrations", r.Integrations),
		Header: figureHeader,
	}
	for _, o := range r.Operators {
		t.Rows = append(t.Rows, []string{fmt.Sprintf("heap of %s owning %d", o.ID, o.Owned), num(o.HeapMiB) + " MiB", "", "", ""})
	}
	t.Rows = append(t.Rows,
		[]string{"heap of an idle operator", num(r.IdleHeapMiB) + " MiB", "", "", ""},
		[]string{fmt.Sprintf("heap at %d%% / heap owning all", r.Split[0]), num(r.SmallOverAll) + "x", "", "", "<= 0.25x"},
		[]string{"heap per owned integration (children included)", num(r.KiBPerIntegration) + " KiB", "", "", "<= 20 KiB"},
	)
	return t
}

// nodesTable has each node's figures in a column, side by side.
func nodesTable(r *result.Nodes) table {
	t := table{Title: "Nodes: the local cluster's nodes of real pods, each on a full cluster of its own, one after the other",
		Header: []string{"figure"}}
	rows := [][]string{{"local cluster up to ready (cache warm)"}, {"idle resident memory of the node's own processes"},
		{"  by process"}, {"  of which their own (anonymous), not their files' pages"}, {"  by process"},
		{"idle CPU of the node's own processes"}, {"first message, kit built with an empty Maven cache"},
		{fmt.Sprintf("first message, kit exists (p50 of %d)", r.Integrations)}, {"first message, kit exists, max"}}
	for _, n := range r.Nodes {
		t.Header = append(t.Header, n.Node+" node")
		if n.Skipped != "" {
			rows[0] = append(rows[0], "skipped: "+n.Skipped)
			for i := 1; i < len(rows); i++ {
				rows[i] = append(rows[i], "")
			}
			continue
		}
		by := func(m map[string]float64) string {
			var out []string
			for _, name := range slices.Sorted(maps.Keys(m)) {
				out = append(out, fmt.Sprintf("%s %s", name, num(m[name])))
			}
			return strings.Join(out, ", ")
		}
		for i, v := range []string{secs(n.UpSeconds), num(result.Total(n.IdleRSSMiB)) + " MiB", by(n.IdleRSSMiB),
			num(result.Total(n.IdleAnonymousMiB)) + " MiB", by(n.IdleAnonymousMiB),
			num(n.IdleCPUMillicores) + " m", secs(n.KitSeconds), secs(n.ExistingSeconds.P50), secs(n.ExistingSeconds.Max)} {
			rows[i] = append(rows[i], v)
		}
	}
	t.Rows = rows
	return t
}

// runtimeTable has the times to the first message and the idle figures, beside the floor's.
func runtimeTable(r *result.Runtime) table {
	heap := "none"
	if r.Heap != "" {
		heap = r.Heap + " from the limit " + r.MemoryLimit
	}
	return table{
		Title:  fmt.Sprintf("Runtime: a timer route as real JVMs on the process node, against the same route, jars and Java started directly (heap %s)", heap),
		Header: figureHeader,
		Rows: [][]string{
			{"first message, kit built with an empty Maven cache", secs(r.ColdSeconds), "", "", ""},
			{"first message, one more dependency on that kit, cache warm", secs(r.WarmSeconds), "", "", "<= 20 s"},
			{fmt.Sprintf("first message, kit exists (p50 of %d)", r.Integrations), secs(r.ExistingSeconds.P50), secs(r.FloorSeconds.P50), num(r.Ratio) + "x", "<= 0.75x"},
			{"first message, kit exists, max", secs(r.ExistingSeconds.Max), secs(r.FloorSeconds.Max), "", ""},
			{"first message, kit exists, against the floor from an archive made the same way", secs(r.ExistingSeconds.P50), secs(r.ArchivedFloorSeconds.P50), num(r.ArchivedFloorRatio) + "x", ""},
			{"the integration's JVM started from the kit's archive", fmt.Sprint(r.ArchiveUsed), "", "", "true"},
			{"resident memory, idle", num(r.Idle.RSSMiB) + " MiB", num(r.FloorIdle.RSSMiB) + " MiB", num(r.RSSRatio) + "x", "<= 1.0x"},
			{"CPU, idle", num(r.Idle.CPUMillicores) + " m", num(r.FloorIdle.CPUMillicores) + " m", "", ""},
		},
	}
}

// providerTable has another provider's figures beside camel-main's, each against its own floor.
func providerTable(r *result.Runtime, q *result.ProviderRuntime) table {
	return table{
		Title: fmt.Sprintf("Runtime on Camel Quarkus (provider %s, platform %s), the same route in the same run, beside camel-main's;"+
			" its floor is the same application on the same Java, started directly", q.Provider, q.RuntimeVersion),
		Header: []string{"figure", q.Provider, "its floor", "ratio", "camel-main"},
		Rows: [][]string{
			{"first message, kit built (Quarkus' jars not in the Maven cache)", secs(q.ColdSeconds), "", "", secs(r.ColdSeconds)},
			{"first message, one more dependency on that kit, cache warm", secs(q.WarmSeconds), "", "", secs(r.WarmSeconds)},
			{fmt.Sprintf("first message, kit exists (p50 of %d)", r.Integrations), secs(q.ExistingSeconds.P50), secs(q.FloorSeconds.P50),
				num(q.Ratio) + "x", secs(r.ExistingSeconds.P50) + " (" + num(r.Ratio) + "x its floor)"},
			{"resident memory, idle", num(q.Idle.RSSMiB) + " MiB", num(q.FloorIdle.RSSMiB) + " MiB", num(q.RSSRatio) + "x",
				num(r.Idle.RSSMiB) + " MiB"},
			{"CPU, idle", num(q.Idle.CPUMillicores) + " m", num(q.FloorIdle.CPUMillicores) + " m", "", num(r.Idle.CPUMillicores) + " m"},
		},
	}
}

// runtimeMoveTable has the figures of a canary of running JVMs; kept says the pods were to
// stay, which the targets of a move without loss then apply to.
func runtimeMoveTable(title string, m *result.RuntimeMove, kept bool) table {
	waves := make([]string, len(m.WaveSeconds))
	for i, w := range m.WaveSeconds {
		waves[i] = secs(w)
	}
	target := func(v string) string {
		if kept {
			return v
		}
		return ""
	}
	t := table{
		Title:  title,
		Header: figureHeader,
		Rows: [][]string{
			{"each wave, to all Running under " + m.To, strings.Join(waves, " / "), "", "", ""},
			{"move time p50", secs(m.MoveSeconds.P50), "", "", ""},
			{"move time p99", secs(m.MoveSeconds.P99), "", "", target("<= 3 s")},
			{"move time max", secs(m.MoveSeconds.Max), "", "", ""},
			{"Builds created by " + m.To, strconv.Itoa(m.Builds), "", "", target("0")},
			{"kits of " + m.To + " that wrap " + m.From + "'s image", strconv.Itoa(m.KitsAdopted), "", "", ""},
			{"pods started by the moves", strconv.Itoa(m.PodsStarted), "", "", target("0")},
			{"restarts of the pods kept", strconv.Itoa(m.Restarts), "", "", "0"},
			{"min ready pods of a moved integration", strconv.Itoa(m.MinReadyPods), "", "", "= 1"},
		},
	}
	if kept {
		lost := strconv.Itoa(m.LostTicks)
		if len(m.Gaps) > 0 {
			lost += " (" + strings.Join(m.Gaps, "; ") + ")"
		}
		t.Rows = append(t.Rows, []string{"timer ticks missing from the logs", lost, "", "", "0"})
	}
	return t
}

// kitsTable has a row per kit built alone: time, jars, downloads and
// layers reused.
func kitsTable(r *result.Build) table {
	t := table{
		Title:  "Kits built one at a time by Maven in a builder pod, pushed to the local registry",
		Header: []string{"KIT", "BUILD", "TO READY", "JARS (NEW)", "MAVEN DOWNLOADED", "LAYERS REUSED"},
	}
	for _, k := range r.Kits {
		t.Rows = append(t.Rows, []string{k.Case, secs(k.Seconds), secs(k.ReadySeconds),
			fmt.Sprintf("%d (%d)", k.Jars, k.AddedJars),
			fmt.Sprintf("%d files, %.1f MB", k.DownloadedFiles, float64(k.DownloadedBytes)/1e6),
			fmt.Sprintf("%d of %d", k.LayersReused, k.Layers)})
	}
	if c := r.Catalog; c != nil {
		t.Rows = append(t.Rows, []string{fmt.Sprintf("the Kamelet catalog (%d Kamelets applied in %s)", c.Kamelets, secs(c.ApplySeconds)),
			"", secs(c.Seconds), "", "", ""})
	}
	return t
}

func buildTable(r *result.Build) table {
	return table{
		Title: fmt.Sprintf("Build: %d integrations over %d dependency sets (runtime + one component each) on one operator, Maven cache warm",
			r.Integrations, r.DependencySets),
		Header: figureHeader,
		Rows: [][]string{
			{"Builds created", strconv.Itoa(r.Builds), "", "", "= " + strconv.Itoa(r.DependencySets)},
			{"all Ready", secs(r.Seconds), "", "", ""},
			{"build duration p50", secs(r.BuildSeconds.P50), "", "", ""},
			{"build duration p99", secs(r.BuildSeconds.P99), "", "", ""},
		},
	}
}
