package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dev/caravan/internal/metrics"
)

func TestPercentile(t *testing.T) {
	values := []float64{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	cases := []struct {
		name string
		p    float64
		want float64
	}{
		{"the median of ten values is the fifth smallest", 50, 5},
		{"p99 of ten values is the largest", 99, 10},
		{"p100 is the maximum", 100, 10},
		{"a tiny percentile is the minimum", 1, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Percentile(values, c.p); got != c.want {
				t.Errorf("Percentile(%v) = %v, want %v", c.p, got, c.want)
			}
		})
	}
	if got := Percentile(nil, 50); got != 0 {
		t.Errorf("Percentile of nothing = %v, want 0", got)
	}
	if values[0] != 5 {
		t.Error("Percentile sorted its input in place")
	}
}

func TestSummarize(t *testing.T) {
	got := Summarize([]float64{0.5, 2, 1})
	want := Distribution{Count: 3, P50: 1, P99: 2, Max: 2}
	if got != want {
		t.Errorf("Summarize = %+v, want %+v", got, want)
	}
}

func TestCurveCountsReadyObjectsOverTime(t *testing.T) {
	start := time.Unix(1000, 0)
	got := Curve(start, []time.Time{start.Add(2 * time.Second), start.Add(500 * time.Millisecond)})
	want := []Point{{0, 0}, {0.5, 1}, {2, 2}}
	if len(got) != len(want) {
		t.Fatalf("Curve = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Curve[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestLiveHeapIsTheHeapGoalOverGOGC(t *testing.T) {
	s := metrics.Samples{{Name: "go_memstats_next_gc_bytes", Value: 40}}
	if got := liveHeap(s); got != 20 {
		t.Errorf("liveHeap with the default GOGC = %v, want 20", got)
	}
	s = append(s, metrics.Sample{Name: "go_gc_gogc_percent", Value: 300})
	if got := liveHeap(s); got != 10 {
		t.Errorf("liveHeap with GOGC=300 = %v, want 10", got)
	}
}

func TestTableAlignsColumns(t *testing.T) {
	var buf bytes.Buffer
	Table{Title: "T", Header: []string{"FIGURE", "VALUE"}, Rows: [][]string{{"a long figure", "1"}, {"b", "22"}}}.Write(&buf)
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
	res := &Results{
		Rollout: &RolloutResult{Integrations: 10, Operators: 2, CaravanSeconds: 3, FloorSeconds: 2, Ratio: 1.5,
			Bare:        BareRollout{Seconds: 2.5, Ratio: 1.25, WritesByKind: map[string]float64{"create deployments": 1}},
			PerOperator: []OperatorFigures{{ID: "a", Owned: 5}, {ID: "b", Owned: 5}}},
		Handoff: &HandoffResult{Integrations: 4, Replicas: 2, From: "a", To: "b",
			WritesByFromAfterReleaseByKind: map[string]int{"patch deployments": 2}, WritesByFromAfterRelease: 2},
	}
	var buf bytes.Buffer
	WriteTables(&buf, res)
	for _, want := range []string{"Rollout: 10 pre-built-image (sourceless) integrations over 2 operators", "1.5x", "Hand-off: 4 Running",
		"the least an operator can do", "1.25x", "writes / integration: create deployments",
		"2 (patch deployments: 2)"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the tables lack %q:\n%s", want, buf.String())
		}
	}
	if strings.Contains(buf.String(), "Share") || strings.Contains(buf.String(), "Build") {
		t.Errorf("the tables show a scenario that did not run:\n%s", buf.String())
	}
}

func TestIntegrationOfNamesTheOwningIntegration(t *testing.T) {
	cases := map[[2]string]string{
		{"integrations", "mover-0001"}:            "mover-0001",
		{"deployments", "mover-0001"}:             "mover-0001",
		{"configmaps", "mover-0001-camel"}:        "mover-0001",
		{"events", "mover-0001.18a2b3c4d5e6f7a8"}: "mover-0001",
		{"events", "mover.0001.18a2b3c4d5e6f7a8"}: "mover.0001",
	}
	for in, want := range cases {
		if got := integrationOf(in[0], in[1]); got != want {
			t.Errorf("integrationOf(%s, %s) = %q, want %q", in[0], in[1], got, want)
		}
	}
}

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

// auditLine is one write of an audit log, in namespace ns.
func auditLine(user, verb, resource, sub, name string, at time.Time, code int) string {
	return fmt.Sprintf(`{"stage":"ResponseComplete","verb":%q,"user":{"username":%q},`+
		`"objectRef":{"resource":%q,"subresource":%q,"namespace":"ns","name":%q},`+
		`"responseStatus":{"code":%d},"stageTimestamp":%q}`,
		verb, user, resource, sub, name, code, at.Format(time.RFC3339Nano))
}

// writeAudit writes lines as an audit log and returns its path.
func writeAudit(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestWritesByKindCountsTheOperatorsWritesOfOneRun(t *testing.T) {
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	a := operatorUserPrefix + "a-operator"
	path := writeAudit(t,
		auditLine(a, "patch", "integrations", "status", "it", start.Add(-time.Minute), 200), // an earlier run
		auditLine(a, "patch", "integrations", "status", "it", start.Add(time.Second), 200),
		auditLine(a, "patch", "integrations", "status", "it", start.Add(2*time.Second), 200),
		auditLine(a, "patch", "integrations", "status", "it", start.Add(2*time.Second), 409), // refused
		auditLine(a, "patch", "deployments", "", "it", start.Add(time.Second), 200),
		auditLine("admin", "create", "integrations", "", "it", start, 201), // not an operator
		auditLine(bareUser, "create", "deployments", "", "it", start.Add(time.Second), 201),
		auditLine(bareUser, "patch", "integrations", "status", "it", start.Add(2*time.Second), 200),
	)
	got, err := writesByKind(path, "ns", operatorUserPrefix, start)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"patch integrations/status": 2, "patch deployments": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Caravan's operators' writes = %v, want %v", got, want)
	}
	got, err = writesByKind(path, "ns", bareUser, start)
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]int{"patch integrations/status": 1, "create deployments": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the bare operator's writes = %v, want %v", got, want)
	}
}

func TestWritesAfterSeparatesTheReleaseFromLaterWrites(t *testing.T) {
	patched := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	a, b := "caravan:operator:a", "caravan:operator:b"
	after := patched.Add(time.Second)
	path := writeAudit(t,
		auditLine(a, "patch", "deployments", "", "it", patched.Add(-time.Second), 200), // before the move
		auditLine(a, "patch", "integrations", "status", "it", after, 200),              // release
		auditLine(a, "patch", "integrations", "", "it", after, 200),                    // label handover
		auditLine(a, "patch", "integrations", "", "it", after, 409),                    // refused
		auditLine(b, "patch", "deployments", "", "it", after, 200),                     // the new owner
		auditLine(a, "patch", "deployments", "", "it", after, 200),                     // after the release
		auditLine(a, "create", "events", "", "it.abc123", after, 201),                  // after the release
		auditLine(a, "patch", "deployments", "", "other", after, 200),                  // not moved
	)
	got, err := writesAfter(path, a, "ns", map[string]time.Time{"it": patched})
	if err != nil {
		t.Fatal(err)
	}
	if got.release != 2 {
		t.Errorf("release writes = %d, want 2", got.release)
	}
	want := map[string]int{"patch deployments": 1, "create events": 1}
	if fmt.Sprint(got.beyond) != fmt.Sprint(want) {
		t.Errorf("writes after the release = %v, want %v", got.beyond, want)
	}
}

func TestSeveralRolloutRunsReportTheMedianRunAndEveryRun(t *testing.T) {
	run := func(caravan, floor float64) *RolloutResult {
		return &RolloutResult{Integrations: 10, Operators: 2, CaravanSeconds: caravan, FloorSeconds: floor, Ratio: caravan / floor,
			Bare: BareRollout{Seconds: floor + 1, Ratio: (floor + 1) / floor}}
	}
	odd := medianRun([]*RolloutResult{run(19, 10), run(17, 10), run(42, 20)})
	if odd.Ratio != 1.9 || len(odd.Runs) != 3 || odd.Runs[1].Ratio != 1.7 || odd.Runs[2].FloorSeconds != 20 ||
		odd.Runs[2].BareSeconds != 21 || odd.Runs[0].BareRatio != 1.1 {
		t.Errorf("median of three: ratio %v, runs %+v", odd.Ratio, odd.Runs)
	}
	even := medianRun([]*RolloutResult{run(20, 10), run(15, 10)})
	if even.Ratio != 1.5 {
		t.Errorf("median of two is the lower middle one: got ratio %v", even.Ratio)
	}

	var buf bytes.Buffer
	WriteTables(&buf, &Results{Rollout: odd})
	for _, want := range []string{"all Ready (median of 3 runs)", "Rollout, every run", "42 s", "2.1x", "1.05x"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the tables lack %q:\n%s", want, buf.String())
		}
	}
	buf.Reset()
	WriteTables(&buf, &Results{Rollout: run(3, 2)})
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
