package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/caravan-dev/caravan/internal/bench"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
)

// BenchOptions are the options of `caravan bench`.
type BenchOptions struct {
	Scenarios           []string
	Integrations        int
	RolloutRuns         int
	Operators           int
	Share               string
	ShareIntegrations   int
	HandoffIntegrations int
	HandoffReplicas     int32
	BuildIntegrations   int
	BuildSets           int
	RuntimeIntegrations int
	AdmissionCreates    int
	AdmissionOperators  []int
	SkipAdmission       bool
	RolloutFlows        bool
	ProfileOperators    bool
	SweepIntegrations   []int
	SweepOperators      []int
	SweepCPULimits      []string
	OutDir              string
	Timeout             time.Duration

	// Set by Complete.
	opts bench.Options

	genericiooptions.IOStreams
}

// newCmdBench builds `caravan bench`. It never uses the kubeconfig: the
// bench brings up a cluster of its own.
func newCmdBench(_ *KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &BenchOptions{
		Scenarios: []string{bench.Rollout, bench.Handoff}, Integrations: 1000, RolloutRuns: 1, Operators: 3, Share: "10,90",
		ShareIntegrations: 5000, HandoffIntegrations: 100, HandoffReplicas: 2,
		BuildIntegrations: 50, BuildSets: 5, RuntimeIntegrations: 5, AdmissionCreates: 500, AdmissionOperators: []int{1, 10, 30},
		Timeout: time.Hour, IOStreams: streams,
	}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure Caravan against the floor on a local cluster of its own",
		Long: `Measure Caravan on a local cluster that the bench starts (and stops) itself; it
never touches the cluster of your kubeconfig. Operators run as separate
processes of this binary, each with its own identity and metrics.

Scenarios:
  rollout  N pre-built-image integrations over M operators, created in one burst,
           against the floor: N bare Deployments with the same pod template.
           Per operator: CPU, peak heap and RSS, reconciles, API reads and writes,
           Events, per integration; the API server's CPU by kind of work.
  handoff  Running integrations (2 replicas) moved from one operator to another in
           one burst: move time p50/p99/max, fewest ready pods, pods started,
           writes by the old owner after the move.
  share    (opt-in, slow) 5000 integrations split 10/90 between two operators, then
           all on a third: steady-state heaps and heap per owned integration.
  build    (opt-in) kits built by Maven in builder pods, on two operators of
           its own: one at a time (cold, cached, on another kit: seconds, files and
           bytes downloaded, layers reused), then integrations over dependency
           sets in one burst, moved to the second operator, which builds its own.
  runtime  (opt-in) a timer route as real JVMs on the process node: seconds to the
           first message (kit built cold, one dependency more with a warm cache,
           N on a kit that exists), and idle RSS and CPU, each beside the floor:
           the same route, jars and Java started directly on this machine.
  recovery (opt-in) N integrations for the first operator, whose pod is killed
           when half are created: the time from the kill to all Ready.
  malformed (opt-in) N valid integrations for the first operator alone, then N
           valid and N malformed ones in one burst: the valid ones' all-Ready time
           beside the malformed against alone, each malformed one's condition, the
           operator's reconciles after, restarts and peak memory.
  admission (opt-in) the API server's CPU per create of an assigned Integration
           with 1, 10 and 30 operators registered, serving every namespace, then
           each limited to one: what the admission policies cost against M.

Sweeps (opt-in, long): --sweep-integrations runs the rollout at each N over
--operators operators, --sweep-operators at each M with -N integrations, each
point with Caravan, the bare operator and the floor side by side; a table and
three plots per sweep (ratio to the floor, CPU per integration, heap per
integration). The bench prints their expected duration before it starts them.

Every figure is a ratio or a count measured side by side in the same run. The
tables go to stdout; bench.json and one PNG per scenario go to --out. The first
run builds the cluster binaries (several minutes).`,
		Example: `  # Rollout and hand-off at the default scale
  caravan bench

  # Everything, smaller, into a directory of your choice
  caravan bench --scenarios rollout,share,handoff,build -N 200 --share-integrations 1000 --out /tmp/perf

  # The scaling curves: the rollout at three N, then at four M (opt-in, long)
  caravan bench --scenarios rollout --sweep-integrations 1000,2500,5000 --sweep-operators 1,3,10,30`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// A sweep alone runs no scenario unless --scenarios asks for some.
			if len(o.SweepIntegrations)+len(o.SweepOperators)+len(o.SweepCPULimits) > 0 && !cmd.Flags().Changed("scenarios") {
				o.Scenarios = nil
			}
			return cmdutil.RunE(o)(cmd, args)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.Scenarios, "scenarios", o.Scenarios, "scenarios to run: rollout, share, handoff, build, runtime, admission, recovery, malformed")
	// -n is kubectl's --namespace on every command.
	f.IntVarP(&o.Integrations, "integrations", "N", o.Integrations, "integrations of the rollout")
	f.IntVar(&o.RolloutRuns, "rollout-runs", o.RolloutRuns,
		"times the rollout, and each point of a sweep, runs (floor, bare operator and Caravan each time); the figures are the median run's, with every run's times")
	f.BoolVar(&o.SkipAdmission, "skip-admission", false,
		"run the operators without the admission policies of caravan install: they mirror the operator-id label themselves")
	f.BoolVar(&o.RolloutFlows, "rollout-flows", false,
		"give the rollout's integrations flows (a ConfigMap each) instead of running the pre-built image alone")
	f.BoolVar(&o.ProfileOperators, "profile-operators", false,
		"take every operator's CPU profile over the rollout (operators-caravan.pprof); each operator pays for its profiles, so its CPU figures include them")
	f.IntVar(&o.Operators, "operators", o.Operators, "operators of the rollout (the hand-off uses the first two)")
	f.StringVar(&o.Share, "share", o.Share, "split of the share scenario between two operators, in percent")
	f.IntVar(&o.ShareIntegrations, "share-integrations", o.ShareIntegrations, "integrations of the share scenario")
	f.IntVar(&o.HandoffIntegrations, "handoff-integrations", o.HandoffIntegrations, "integrations moved at once in the hand-off scenario")
	f.Int32Var(&o.HandoffReplicas, "handoff-replicas", o.HandoffReplicas, "replicas of each moved integration")
	f.IntVar(&o.BuildIntegrations, "build-integrations", o.BuildIntegrations, "integrations of the build scenario")
	f.IntVar(&o.BuildSets, "build-dependency-sets", o.BuildSets, "distinct dependency sets of the build scenario")
	f.IntVar(&o.RuntimeIntegrations, "runtime-integrations", o.RuntimeIntegrations, "integrations the runtime scenario starts on a kit that exists, one at a time (and floor runs)")
	f.IntVar(&o.AdmissionCreates, "admission-creates", o.AdmissionCreates, "integrations the admission scenario creates at each point")
	f.IntSliceVar(&o.AdmissionOperators, "admission-operators", o.AdmissionOperators,
		"operators registered at each point of the admission scenario")
	f.IntSliceVar(&o.SweepIntegrations, "sweep-integrations", nil,
		"after the scenarios, run the rollout at each of these N (1000,2500,5000) over --operators operators; prints its expected duration first")
	f.IntSliceVar(&o.SweepOperators, "sweep-operators", nil,
		"after the scenarios, run the rollout of -N integrations over each of these M operators (1,3,10,30)")
	f.StringSliceVar(&o.SweepCPULimits, "sweep-cpu-limits", nil,
		"after the scenarios, run the rollout of -N integrations over --operators operators whose CPU limit is each of these (1,2); the operator runs as many Go processors as its limit")
	f.StringVar(&o.OutDir, "out", "", "directory for bench.json and the PNGs (default docs/perf when it exists here, else a new temporary directory)")
	f.DurationVar(&o.Timeout, "timeout", o.Timeout, "give up after this long (the cluster is cleaned up all the same)")
	return cmd
}

// Validate checks the bench's options against each other.
func (o *BenchOptions) Validate() error { return o.opts.Validate() }

// Complete resolves the binary, the share split and the output directory.
func (o *BenchOptions) Complete() error {
	binary, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the caravan binary: %w", err)
	}
	split, err := parseSplit(o.Share)
	if err != nil {
		return err
	}
	if o.OutDir == "" {
		o.OutDir = "docs/perf"
		if st, err := os.Stat(o.OutDir); err != nil || !st.IsDir() {
			if o.OutDir, err = os.MkdirTemp("", "caravan-bench-out-"); err != nil {
				return err
			}
		}
	}
	o.opts = bench.Options{
		Binary: binary, Scenarios: o.Scenarios, Integrations: o.Integrations, RolloutRuns: o.RolloutRuns, Operators: o.Operators,
		ShareIntegrations: o.ShareIntegrations, ShareSplit: split,
		HandoffIntegrations: o.HandoffIntegrations, HandoffReplicas: o.HandoffReplicas,
		BuildIntegrations: o.BuildIntegrations, BuildDependencySets: o.BuildSets, RuntimeIntegrations: o.RuntimeIntegrations,
		AdmissionCreates: o.AdmissionCreates, AdmissionOperators: o.AdmissionOperators,
		SkipAdmission: o.SkipAdmission, RolloutFlows: o.RolloutFlows, ProfileOperators: o.ProfileOperators, Out: o.OutDir, Progress: o.ErrOut, Report: o.Out,
		SweepIntegrations: o.SweepIntegrations, SweepOperators: o.SweepOperators, SweepCPULimits: o.SweepCPULimits,
	}
	return nil
}

// Run runs the bench within the timeout.
func (o *BenchOptions) Run(ctx context.Context) error {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	_, err := bench.Run(ctx, o.opts)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("the bench did not finish within --timeout %s: %w", o.Timeout, err)
	}
	if err == nil {
		fmt.Fprintf(o.ErrOut, "figures written to %s\n", o.opts.Out)
	}
	return err
}

// parseSplit reads "10,90".
func parseSplit(s string) ([2]int, error) {
	var split [2]int
	parts := strings.Split(s, ",")
	if len(parts) != 2 {
		return split, fmt.Errorf("--share must be two percentages like 10,90, got %q", s)
	}
	for i, p := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return split, fmt.Errorf("--share must be two percentages like 10,90, got %q", s)
		}
		split[i] = v
	}
	return split, nil
}
