package report

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/bench/result"
)

func TestTableAlignsColumns(t *testing.T) {
	var buf bytes.Buffer
	table{Title: "T", Header: []string{"FIGURE", "VALUE"}, Rows: [][]string{{"a long figure", "1"}, {"b", "22"}}}.Write(&buf)
	want := "\nT\nFIGURE         VALUE\na long figure  1\nb              22\n"
	if buf.String() != want {
		t.Errorf("table:\n%q\nwant\n%q", buf.String(), want)
	}
}

func TestNumPrintsAtMostTwoDecimals(t *testing.T) {
	for in, want := range map[float64]string{1: "1", 1.5: "1.5", 0.126: "0.13", 7.1: "7.1", 100: "100"} {
		if got := num(in); got != want {
			t.Errorf("num(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestTablesShowEveryScenarioThatRan(t *testing.T) {
	res := &result.Results{
		Rollout: &result.Rollout{Integrations: 10, Operators: 2, CaravanSeconds: 3, FloorSeconds: 2, Ratio: 1.5,
			Bare: result.BareRollout{Seconds: 2.5, Ratio: 1.25, WritesByKind: map[string]float64{"create deployments": 1},
				WatchEvents: map[string]float64{"pods": 5, "integrations.camel.apache.org": 2}},
			PerOperator:        []measure.OperatorFigures{{ID: "a", Owned: 5}, {ID: "b", Owned: 5}},
			CaravanWatchEvents: map[string]float64{"pods": 5, "integrations.camel.apache.org": 7.5, "leases.coordination.k8s.io": 0.004},
			FloorWatchEvents:   map[string]float64{"pods": 4.5}},
		Handoff: &result.Handoff{Integrations: 4, Replicas: 2, From: "a", To: "b",
			WritesByFromAfterReleaseByKind: map[string]int{"patch deployments": 2}, WritesByFromAfterRelease: 2},
	}
	var buf bytes.Buffer
	WriteTables(&buf, res)
	for _, want := range []string{"Rollout: 10 pre-built-image (sourceless) integrations over 2 operators", "1.5x", "Hand-off: 4 Running",
		"the least an operator can do", "1.25x", "writes / integration: create deployments",
		"2 (patch deployments: 2)", "events the API server sent its watchers",
		"integrations.camel.apache.org  7.5      2              0", "all                            12.5     7              4.5"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the tables lack %q:\n%s", want, buf.String())
		}
	}
	if strings.Contains(buf.String(), "leases.coordination") {
		t.Errorf("the watch events show a resource under 0.01 per integration:\n%s", buf.String())
	}
	if strings.Contains(buf.String(), "Share") || strings.Contains(buf.String(), "Build") {
		t.Errorf("the tables show a scenario that did not run:\n%s", buf.String())
	}
}

func TestTheNodesTableHasANodePerColumnAndSaysWhyOneWasSkipped(t *testing.T) {
	res := &result.Results{Nodes: &result.Nodes{Integrations: 3, Nodes: []result.NodeFigures{
		{Node: "process", UpSeconds: 6.1, IdleRSSMiB: map[string]float64{"process-node": 85.25},
			IdleAnonymousMiB: map[string]float64{"process-node": 20.5}, IdleCPUMillicores: 4,
			KitSeconds: 41.5, ExistingSeconds: measure.Distribution{P50: 3.25, Max: 3.5}},
		{Node: "kubelet", Skipped: "the kubelet node needs root"}}}}
	var buf bytes.Buffer
	WriteTables(&buf, res)
	for _, want := range []string{"process node", "kubelet node", "skipped: the kubelet node needs root", "6.1 s",
		"85.25 MiB", "process-node 85.25", "20.5 MiB", "process-node 20.5", "first message, kit exists (p50 of 3)", "3.25 s"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the tables lack %q:\n%s", want, buf.String())
		}
	}
}

func TestASweepHasATableAndThreePlotsAgainstWhatItVaries(t *testing.T) {
	point := func(n, m int, ratio float64) result.SweepPoint {
		return result.SweepPoint{Integrations: n, Operators: m, Ratio: ratio, BareRatio: 1.1, CaravanSeconds: ratio * 10,
			FloorSeconds: 10, CPUMillisPerIntegration: 3.5, HeapKiBPerIntegration: 12, RSSMiBPerOperator: 40,
			WatchEventsPerIntegration: 31.5, BareWatchEventsPerIntegration: 27.25}
	}
	res := &result.Results{
		SweepIntegrations: []result.SweepPoint{point(1000, 3, 1.4), point(2500, 3, 1.5)},
		SweepOperators:    []result.SweepPoint{point(1000, 1, 1.3), point(1000, 10, 1.6)},
	}
	var buf bytes.Buffer
	WriteTables(&buf, res)
	for _, want := range []string{"Sweep over N: the rollout over 3 operators", "Sweep over M: the rollout of 1000 integrations",
		"2500", "1.6", "RSS MIB/OPERATOR", "WATCH EVENTS/INTEGRATION (BARE)", "31.5 (27.25)"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the tables lack %q:\n%s", want, buf.String())
		}
	}
	dir := t.TempDir()
	if err := WriteFiles(dir, res); err != nil {
		t.Fatal(err)
	}
	for _, sweep := range []string{"sweep-integrations", "sweep-operators"} {
		for _, figure := range []string{"ratio", "cpu", "heap"} {
			if _, err := os.Stat(filepath.Join(dir, sweep+"-"+figure+".png")); err != nil {
				t.Errorf("no plot of the %s of %s: %v", figure, sweep, err)
			}
		}
	}
	if strings.Contains(buf.String(), "EVERY RUN") {
		t.Errorf("points that ran once show every run's ratio:\n%s", buf.String())
	}
}

func TestASweepOfSeveralRunsAPointShowsEveryRunsRatio(t *testing.T) {
	run := func(ratio float64) result.RolloutRun {
		return result.RolloutRun{Ratio: ratio, FloorSeconds: 10, CaravanSeconds: ratio * 10, OperatorsCPUSeconds: ratio * 4}
	}
	res := &result.Results{SweepIntegrations: []result.SweepPoint{
		{Integrations: 1000, Operators: 3, Ratio: 1.62, Runs: []result.RolloutRun{run(1.71), run(1.62), run(1.55)}},
		{Integrations: 5000, Operators: 3, Ratio: 1.58, Runs: []result.RolloutRun{run(1.58), run(1.49), run(1.64)}},
	}}
	var buf bytes.Buffer
	WriteTables(&buf, res)
	for _, want := range []string{"EVERY RUN'S RATIO", "1.71, 1.62, 1.55", "1.58, 1.49, 1.64", "EVERY RUN'S CPU MS/INTEGRATION", "6.84, 6.48, 6.2"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the sweep's table lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestTheRuntimeMovesHaveTwoTablesAPlotAndTheRunAsSweepATable(t *testing.T) {
	move := func(to string, times ...float64) *result.RuntimeMove {
		return &result.RuntimeMove{From: "a", To: to, Integrations: len(times), WaveSeconds: []float64{1, 2}, MoveTimes: times,
			MoveSeconds: measure.Summarize(times), MinReadyPods: 1}
	}
	res := &result.Results{
		Runtime:    &result.Runtime{Integrations: 1, Move: move("b", 0.2, 0.4), Roll: move("c", 15, 30)},
		SweepRunAs: []result.SweepPoint{{Integrations: 100, Operators: 3, RunAs: "pods", Ratio: 1.6}, {Integrations: 100, Operators: 3, RunAs: "processes", Ratio: 1.5}},
	}
	res.Runtime.Move.Gaps = []string{"x: 2 ticks missing"}
	res.Runtime.Move.LostTicks = 2
	res.Runtime.Quarkus = &result.ProviderRuntime{Provider: "quarkus", RuntimeVersion: "3.31.2", StartFigures: result.StartFigures{ColdSeconds: 41, Ratio: 1.2}}
	var buf bytes.Buffer
	WriteTables(&buf, res)
	for _, want := range []string{"Runtime, moved: 2 running JVMs moved a -> b in a canary of 2 waves", "Runtime, rolled: the same moved on a -> c",
		"2 (x: 2 ticks missing)", "Sweep over how the operators run", "processes", "Runtime on Camel Quarkus (provider quarkus, platform 3.31.2)", "1.2x"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the tables lack %q:\n%s", want, buf.String())
		}
	}
	dir := t.TempDir()
	if err := WriteFiles(dir, res); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "runtime-moves.png")); err != nil {
		t.Errorf("no plot of the runtime's moves: %v", err)
	}
}

func TestTheRolloutSetsEachPhasesTimeBesideTheCPUItUsed(t *testing.T) {
	res := &result.Results{
		Machine: result.Machine{CPUs: 2},
		Rollout: &result.Rollout{Integrations: 1000, Operators: 3, CaravanSeconds: 30, FloorSeconds: 20, Ratio: 1.5,
			FloorControlPlaneCPU:   map[string]float64{"etcd": 10, "kube-apiserver": 29},
			CaravanControlPlaneCPU: map[string]float64{"etcd": 15, "kube-apiserver": 40},
			FloorBenchCPU:          1, CaravanBenchCPU: 2, All: measure.OperatorFigures{CPUSeconds: 3},
			Bare: result.BareRollout{Seconds: 25, Ratio: 1.25, BenchCPU: 4,
				ControlPlaneCPU: map[string]float64{"etcd": 12, "kube-apiserver": 34}}},
	}
	var buf bytes.Buffer
	WriteTables(&buf, res)
	// Caravan: 55 + 3 + 2 = 60 s; bare: 46 + 4 = 50 s; floor: 39 + 1 = 40 s.
	for _, want := range [][]string{
		{"CPU", "60 s", "50 s", "40 s"},
		{"cores busy (CPU / all Ready)", "2 of 2", "2 of 2", "2 of 2"},
		{"CPU ratio to the floor", "1.5x", "1.25x", "1x"},
		{"CPU per integration above the floor", "20 ms", "10 ms", "0 ms"},
	} {
		if !hasRow(buf.String(), want) {
			t.Errorf("the tables lack the row %q:\n%s", want, buf.String())
		}
	}
}

// hasRow tells whether out has a line of exactly cells, separated by two spaces or more.
func hasRow(out string, cells []string) bool {
	for _, line := range strings.Split(out, "\n") {
		if slices.Equal(regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1), cells) {
			return true
		}
	}
	return false
}
