package bench

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/bench/report"
	"github.com/caravan-dev/caravan/internal/bench/result"
)

func TestTheFloorOfASourcelessIntegrationIsItsDeploymentAlone(t *testing.T) {
	cm, dep, err := floorObjects(prebuilt("ns", "it-1", "bench-0", 1))
	if err != nil {
		t.Fatal(err)
	}
	if cm != nil {
		t.Errorf("a ConfigMap for a sourceless integration: %v", cm)
	}
	if len(dep.GetOwnerReferences()) != 0 || dep.GetLabels()["camel.apache.org/operator.id"] != floorID {
		t.Errorf("floor Deployment with owners or the wrong id: %v %v", dep.GetOwnerReferences(), dep.GetLabels())
	}
}

func TestFloorObjectsHaveNoOwnerAndTheFloorID(t *testing.T) {
	it := newIntegration("ns", "it-1", "bench-0", 1, Image)
	cm, dep, err := floorObjects(it)
	if err != nil {
		t.Fatal(err)
	}
	if len(cm.GetOwnerReferences()) != 0 || len(dep.GetOwnerReferences()) != 0 {
		t.Error("floor objects have owners: the garbage collector would delete them")
	}
	if got := dep.GetLabels()["camel.apache.org/operator.id"]; got != floorID {
		t.Errorf("floor Deployment labelled for %q, want %q", got, floorID)
	}
}

func TestSeveralRolloutRunsReportTheMedianRunAndEveryRun(t *testing.T) {
	run := func(caravan, floor float64) *result.Rollout {
		return &result.Rollout{Integrations: 10, Operators: 2, CaravanSeconds: caravan, FloorSeconds: floor, Ratio: caravan / floor,
			Bare: result.BareRollout{Seconds: floor + 1, Ratio: (floor + 1) / floor}, All: measure.OperatorFigures{CPUSeconds: caravan / 10}}
	}
	odd := medianRun([]*result.Rollout{run(19, 10), run(17, 10), run(42, 20)})
	if odd.Ratio != 1.9 || len(odd.Runs) != 3 || odd.Runs[1].Ratio != 1.7 || odd.Runs[2].FloorSeconds != 20 ||
		odd.Runs[2].BareSeconds != 21 || odd.Runs[0].BareRatio != 1.1 || odd.Runs[2].OperatorsCPUSeconds != 4.2 {
		t.Errorf("median of three: ratio %v, runs %+v", odd.Ratio, odd.Runs)
	}
	// The median run used 1.9 s; with runs of 1.9, 3 and 4.2 s the point's
	// CPU is the median of the three, 3 s.
	odd.Runs[1].OperatorsCPUSeconds = 3
	if p := sweepPoint(odd); p.CPUMillisPerIntegration != 300 {
		t.Errorf("a point of three runs has the median of their CPU per integration, 300 ms, got %v", p.CPUMillisPerIntegration)
	}
	even := medianRun([]*result.Rollout{run(20, 10), run(15, 10)})
	if even.Ratio != 1.5 {
		t.Errorf("median of two is the lower middle one: got ratio %v", even.Ratio)
	}

	var buf bytes.Buffer
	report.WriteTables(&buf, &result.Results{Rollout: odd})
	for _, want := range []string{"all Ready (median of 3 runs)", "Rollout, every run", "42 s", "2.1x", "1.05x"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the tables lack %q:\n%s", want, buf.String())
		}
	}
	buf.Reset()
	report.WriteTables(&buf, &result.Results{Rollout: run(3, 2)})
	if strings.Contains(buf.String(), "every run") || strings.Contains(buf.String(), "median") {
		t.Errorf("one run shows a runs table:\n%s", buf.String())
	}
}

func TestOptionsRefuseARolloutThatRunsNeverOrTooOften(t *testing.T) {
	valid := Options{Scenarios: []string{Rollout}, Integrations: 10, Operators: 3, RolloutRuns: 3,
		ShareIntegrations: 100, ShareSplit: [2]int{10, 90}, HandoffIntegrations: 1, HandoffReplicas: 1,
		BuildIntegrations: 1, BuildDependencySets: 1}
	if err := valid.Validate(); err != nil {
		t.Fatalf("valid options refused: %v", err)
	}
	for _, runs := range []int{0, 10} {
		o := valid
		o.RolloutRuns = runs
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "1 to 9 times") {
			t.Errorf("%d runs: got %v", runs, err)
		}
	}
}

// TestOptionsRefuseMoreBuildSetsThanComponents: each dependency set of
// the build scenario adds its own component; there are so many.
func TestOptionsRefuseMoreBuildSetsThanComponents(t *testing.T) {
	o := Options{Scenarios: []string{Build}, Integrations: 10, Operators: 1, RolloutRuns: 1,
		ShareIntegrations: 100, ShareSplit: [2]int{10, 90}, HandoffIntegrations: 1, HandoffReplicas: 1,
		BuildIntegrations: 10, BuildDependencySets: len(BuildComponents)}
	if err := o.Validate(); err != nil {
		t.Fatalf("one set per component refused: %v", err)
	}
	o.BuildDependencySets++
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "dependency sets at most") {
		t.Errorf("%d sets: got %v", o.BuildDependencySets, err)
	}
}

func TestTheSweepsEstimateGrowsWithTheirPointsInWholeMinutes(t *testing.T) {
	if small := SweepEstimate(Options{Integrations: 10, Operators: 1, SweepIntegrations: []int{5}}); small != time.Minute {
		t.Errorf("a short sweep is about a minute, not %s", small)
	}
	big := SweepEstimate(Options{Integrations: 1000, Operators: 3, SweepIntegrations: []int{1000, 2500, 5000},
		SweepOperators: []int{1, 3, 10, 30}})
	if big <= 30*time.Minute || big%time.Minute != 0 {
		t.Errorf("the full sweep is estimated at %s: want more than 30 minutes, in whole minutes", big)
	}
	thrice := SweepEstimate(Options{Integrations: 1000, Operators: 3, RolloutRuns: 3, SweepIntegrations: []int{1000, 2500, 5000},
		SweepOperators: []int{1, 3, 10, 30}})
	if thrice < 2*big {
		t.Errorf("with three runs a point the sweep is estimated at %s, against %s with one", thrice, big)
	}
}

func TestTheMemorySamplesOfASetKeepToAFixedRateWhateverItsSize(t *testing.T) {
	for _, n := range []int{1, 2, 3, 10, 30, MaxOperators} {
		every := sampleInterval(n)
		if every < time.Second {
			t.Errorf("%d operators: each sampled every %s, more often than every second", n, every)
		}
		if rate := float64(n) / every.Seconds(); rate > memorySamplesPerSecond+1e-9 {
			t.Errorf("%d operators, each every %s: %.2f samples a second, over %d", n, every, rate, memorySamplesPerSecond)
		}
	}
	if got := sampleInterval(30); got != 10*time.Second {
		t.Errorf("30 operators sampled every %s, want 10s", got)
	}
}

// TestTickTimeIsTheNodesTimeOfTheFirstTick: the runtime scenario reads a log with timestamps.
func TestTickTimeIsTheNodesTimeOfTheFirstTick(t *testing.T) {
	log := "2026-12-04T10:00:00.100000000Z Apache Camel 4.18.0 (camel-1) started\n" +
		"2026-12-04T10:00:01.250000000Z [main] INFO route1 - " + tickMark + "1\n" +
		"2026-12-04T10:00:02.250000000Z [main] INFO route1 - " + tickMark + "2\n"
	at, ok := tickTime(log)
	if want := time.Date(2026, 12, 4, 10, 0, 1, 250_000_000, time.UTC); !ok || !at.Equal(want) {
		t.Errorf("tickTime = %s, %v; want %s", at, ok, want)
	}
	if _, ok := tickTime("2026-12-04T10:00:00Z started\n"); ok {
		t.Error("a log without a tick has one")
	}
}

func TestOptionsRefuseACPULimitThatIsNone(t *testing.T) {
	o := Options{Integrations: 10, Operators: 1, RolloutRuns: 1, ShareIntegrations: 100, ShareSplit: [2]int{10, 90},
		HandoffIntegrations: 1, HandoffReplicas: 1, BuildIntegrations: 1, BuildDependencySets: 1, SweepCPULimits: []string{"1", "1500m"}}
	if err := o.Validate(); err != nil {
		t.Fatalf("CPU limits 1 and 1500m refused: %v", err)
	}
	for _, bad := range []string{"0", "-1", "two"} {
		o.SweepCPULimits = []string{bad}
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--sweep-cpu-limits") {
			t.Errorf("CPU limit %q: got %v", bad, err)
		}
	}
}

// TestTickGapsCountTheNumbersMissingBetweenTicks: a move without loss leaves none.
func TestTickGapsCountTheNumbersMissingBetweenTicks(t *testing.T) {
	line := func(sec, n int) string {
		return fmt.Sprintf("2026-12-04T10:00:%02d.000000000Z [main] INFO route1 - %s%d\n", sec, tickMark, n)
	}
	whole := "2026-12-04T10:00:00.000000000Z Apache Camel 4.18.0 (camel-1) started\n" + line(1, 1) + line(2, 2) + line(3, 3)
	if lost, last, at := tickGaps(whole); lost != 0 || last != 3 || at.Second() != 3 {
		t.Errorf("a log counting 1, 2, 3: lost %d, last %d at %s", lost, last, at)
	}
	if lost, last, _ := tickGaps(line(1, 1) + line(2, 2) + line(5, 5) + line(7, 7)); lost != 3 || last != 7 {
		t.Errorf("a log counting 1, 2, 5, 7: lost %d (want 3), last %d", lost, last)
	}
	if lost, last, _ := tickGaps("2026-12-04T10:00:01.000000000Z " + tickMark + "\n" + line(2, 2)); lost != 0 || last != 2 {
		t.Errorf("a log with a tick mark and no count: lost %d, last %d", lost, last)
	}
	if lost, last, _ := tickGaps("no ticks\n"); lost != 0 || last != 0 {
		t.Errorf("a log without ticks: lost %d, last %d", lost, last)
	}
}

func TestOptionsRefuseARuntimeScenarioThatMovesFewerThanItsWaves(t *testing.T) {
	o := Options{Scenarios: []string{Runtime}, Integrations: 10, Operators: 1, RolloutRuns: 1,
		ShareIntegrations: 100, ShareSplit: [2]int{10, 90}, HandoffIntegrations: 1, HandoffReplicas: 1,
		BuildIntegrations: 1, BuildDependencySets: 1, RuntimeIntegrations: 1, RuntimeMoves: len(runtimeWaves)}
	if err := o.Validate(); err != nil {
		t.Fatalf("one integration per wave refused: %v", err)
	}
	o.RuntimeMoves--
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "one per wave") {
		t.Errorf("%d moves: got %v", o.RuntimeMoves, err)
	}
}
