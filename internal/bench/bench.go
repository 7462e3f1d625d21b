// Package bench measures Caravan against the floor on its own local
// cluster: a rollout of N integrations over M operators next to N bare
// Deployments with the same pod template, each operator's memory against
// its share, hand-offs between operators, and kit builds against a real
// registry. Every figure is a ratio or a count measured side by side in
// the same run, because absolute times drift on shared machines. It
// prints tables and writes bench.json and one PNG per scenario.
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Scenario names.
const (
	Rollout = "rollout"
	Share   = "share"
	Handoff = "handoff"
	Build   = "build"
)

// Scenarios are the known scenarios, in the order they run.
var Scenarios = []string{Rollout, Share, Handoff, Build}

// Options say what to measure.
type Options struct {
	// Binary is the caravan executable whose `operator` command runs the
	// operators.
	Binary    string
	Scenarios []string
	// Integrations is N of the rollout; Operators is M. RolloutRuns is
	// how many times the rollout runs (floor and Caravan each time).
	Integrations int
	Operators    int
	RolloutRuns  int
	// ShareIntegrations are split between two operators by ShareSplit
	// (percent each).
	ShareIntegrations int
	ShareSplit        [2]int
	// HandoffIntegrations with HandoffReplicas pods each move at once.
	HandoffIntegrations int
	HandoffReplicas     int32
	// BuildIntegrations over BuildDependencySets build on one operator.
	BuildIntegrations   int
	BuildDependencySets int
	// SkipAdmission runs the operators without the admission policies
	// that `caravan install` installs: they mirror the operator-id label
	// themselves, and every operator watches the whole cluster.
	SkipAdmission bool
	// RolloutFlows gives the rollout's integrations flows, a ConfigMap
	// each, instead of running a pre-built image alone.
	RolloutFlows bool
	// Out receives bench.json and the PNGs.
	Out string
	// Progress receives progress lines; Report the tables.
	Progress io.Writer
	Report   io.Writer
}

// Results are every figure of one run.
type Results struct {
	Machine  Machine           `json:"machine"`
	Options  ResultOptions     `json:"options"`
	Started  time.Time         `json:"started"`
	Seconds  float64           `json:"seconds"`
	Rollout  *RolloutResult    `json:"rollout,omitempty"`
	Share    *ShareResult      `json:"share,omitempty"`
	Handoff  *HandoffResult    `json:"handoff,omitempty"`
	Build    *BuildResult      `json:"build,omitempty"`
	Failures map[string]string `json:"failures,omitempty"`
}

// ResultOptions record what was asked.
type ResultOptions struct {
	Scenarios    []string `json:"scenarios"`
	Integrations int      `json:"integrations"`
	Operators    int      `json:"operators"`
	RolloutRuns  int      `json:"rolloutRuns"`
	Share        [2]int   `json:"share"`
	ShareN       int      `json:"shareIntegrations"`
	// SkipAdmission is set when the operators ran without the admission
	// policies.
	SkipAdmission bool `json:"skipAdmission,omitempty"`
	// RolloutFlows is set when the rollout's integrations had flows.
	RolloutFlows bool `json:"rolloutFlows,omitempty"`
}

// Machine describes where the figures come from.
type Machine struct {
	CPUs      int    `json:"cpus"`
	CPUModel  string `json:"cpuModel"`
	MemoryGiB int    `json:"memoryGiB"`
	GoVersion string `json:"goVersion"`
	OS        string `json:"os"`
}

// Validate checks the options.
func (o *Options) Validate() error {
	for _, s := range o.Scenarios {
		if !slices.Contains(Scenarios, s) {
			return fmt.Errorf("unknown scenario %q (known: %v)", s, Scenarios)
		}
	}
	if len(o.Scenarios) == 0 {
		return errors.New("no scenario to run")
	}
	if o.Integrations < 1 || o.Operators < 1 || o.Operators > 20 {
		return fmt.Errorf("need at least 1 integration and 1 to 20 operators, got %d and %d", o.Integrations, o.Operators)
	}
	if o.RolloutRuns < 1 || o.RolloutRuns > 9 {
		return fmt.Errorf("the rollout runs 1 to 9 times, got %d", o.RolloutRuns)
	}
	if o.ShareSplit[0] <= 0 || o.ShareSplit[1] <= 0 || o.ShareSplit[0]+o.ShareSplit[1] != 100 {
		return fmt.Errorf("the share split must be two positive percentages adding up to 100, got %v", o.ShareSplit)
	}
	if o.ShareIntegrations < 10 || o.HandoffIntegrations < 1 || o.HandoffReplicas < 1 ||
		o.BuildIntegrations < 1 || o.BuildDependencySets < 1 {
		return errors.New("the share scenario needs at least 10 integrations, and the hand-off and build scenarios at least 1 integration, replica and dependency set")
	}
	for _, s := range []string{Handoff, Build} {
		if slices.Contains(o.Scenarios, s) && o.Operators < 2 {
			return fmt.Errorf("the %s scenario needs at least 2 operators (it moves integrations from one to another)", s)
		}
	}
	return nil
}

// Run brings up a local cluster, runs the scenarios, prints the tables
// and writes the figures. The cluster and every process it started are
// gone when Run returns, also when ctx is cancelled. A scenario that
// fails is reported and the next one runs.
func Run(ctx context.Context, o Options) (*Results, error) {
	res := &Results{Machine: machine(), Started: time.Now(), Failures: map[string]string{},
		Options: ResultOptions{Scenarios: o.Scenarios, Integrations: o.Integrations, Operators: o.Operators, RolloutRuns: o.RolloutRuns,
			Share: o.ShareSplit, ShareN: o.ShareIntegrations, SkipAdmission: o.SkipAdmission,
			RolloutFlows: o.RolloutFlows}}
	// The bench's own watches log nothing worth reading.
	ctrl.SetLogger(textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(io.Discard))))
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	e, err := startEnv(ctx, o.Binary, o.Progress)
	if err != nil {
		return nil, err
	}
	e.skipAdmission, e.rolloutFlows = o.SkipAdmission, o.RolloutFlows
	defer func() {
		fmt.Fprintln(o.Progress, "stopping the operators and the local cluster")
		if err := e.stop(); err != nil {
			fmt.Fprintln(o.Progress, "stopping:", err)
		}
	}()
	for _, s := range Scenarios {
		if !slices.Contains(o.Scenarios, s) {
			continue
		}
		if err := runScenario(ctx, e, o, s, res); err != nil {
			if ctx.Err() != nil {
				return res, err
			}
			fmt.Fprintf(o.Progress, "%s: failed: %v\n", s, err)
			res.Failures[s] = err.Error()
		}
	}
	res.Seconds = round3(time.Since(res.Started).Seconds())
	WriteTables(o.Report, res)
	if err := writeOutputs(o.Out, res); err != nil {
		return res, err
	}
	if len(res.Failures) > 0 {
		return res, fmt.Errorf("%d scenario(s) failed; the logs are in %s", len(res.Failures), e.dir)
	}
	return res, nil
}

func runScenario(ctx context.Context, e *env, o Options, s string, res *Results) error {
	var err error
	switch s {
	case Rollout:
		ops, startErr := e.operatorSet(ctx, "rollout", o.Operators)
		if startErr != nil {
			return startErr
		}
		res.Rollout, err = runRollouts(ctx, e, ops, o.Integrations, o.RolloutRuns)
	case Share:
		res.Share, err = runShare(ctx, e, o.ShareIntegrations, o.ShareSplit)
	case Handoff:
		ops, startErr := e.operatorSet(ctx, "rollout", o.Operators)
		if startErr != nil {
			return startErr
		}
		res.Handoff, err = runHandoff(ctx, e, ops[0], ops[1], o.HandoffIntegrations, o.HandoffReplicas)
	case Build:
		ops, startErr := e.operatorSet(ctx, "rollout", o.Operators)
		if startErr != nil {
			return startErr
		}
		res.Build, err = runBuild(ctx, e, ops[0], ops[1], o.BuildIntegrations, o.BuildDependencySets)
	}
	return err
}

// operatorSet returns the operators of a set, started (and sampled) on
// first use: bench-0 … bench-<n-1>.
func (e *env) operatorSet(ctx context.Context, name string, n int) ([]*Operator, error) {
	if ops, ok := e.sets[name]; ok {
		return ops, nil
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("bench-%d", i)
	}
	fmt.Fprintf(e.progress, "starting %d operators\n", n)
	ops, err := e.startOperators(ctx, ids...)
	if err != nil {
		return nil, err
	}
	sampleOperators(ctx, ops)
	if e.sets == nil {
		e.sets = map[string][]*Operator{}
	}
	e.sets[name] = ops
	return ops, nil
}

func writeOutputs(dir string, res *Results) error {
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	if r := res.Rollout; r != nil {
		if err := writeProfile(filepath.Join(dir, "apiserver-floor.pprof"), r.floorProfile); err != nil {
			return err
		}
		if err := writeProfile(filepath.Join(dir, "apiserver-bare.pprof"), r.bareProfile); err != nil {
			return err
		}
		if err := writeProfile(filepath.Join(dir, "apiserver-caravan.pprof"), r.caravanProfile); err != nil {
			return err
		}
		if err := writeProfile(filepath.Join(dir, "operators-caravan.pprof"), r.operatorsProfile); err != nil {
			return err
		}
	}
	return writePlots(dir, res)
}

func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.CPUModel = field(string(data), "model name")
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int
		if _, err := fmt.Sscanf(field(string(data), "MemTotal"), "%d", &kb); err == nil {
			m.MemoryGiB = (kb + 512*1024) / (1024 * 1024)
		}
	}
	return m
}
