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
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/caravan-dev/caravan/internal/bench"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
)

// BenchOptions are the options of `caravan bench`: the flags set bench.Options directly, but for
// the share split, read from Share, and the timeout.
type BenchOptions struct {
	Bench   bench.Options
	Share   string
	Timeout time.Duration

	genericiooptions.IOStreams
}

// newCmdBench builds `caravan bench`. It never uses the kubeconfig: the
// bench brings up a cluster of its own.
func newCmdBench(_ *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := newBenchOptions(streams)
	cmd := &cobra.Command{
		Use:     "bench",
		Short:   "Measure Caravan against the floor on a local cluster of its own",
		Long:    benchLong,
		Example: benchExample,
		Args:    cobra.NoArgs,
		RunE:    o.runE,
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// newBenchOptions returns the bench's options at their defaults.
func newBenchOptions(streams genericiooptions.IOStreams) *BenchOptions {
	return &BenchOptions{
		Bench: bench.Options{
			Scenarios: []string{bench.Rollout, bench.Handoff}, Integrations: 1000, RolloutRuns: 1, Operators: 3,
			ShareIntegrations: 5000, HandoffIntegrations: 100, HandoffReplicas: 2,
			BuildIntegrations: 50, BuildDependencySets: 5, RuntimeIntegrations: 5, RuntimeMoves: 10,
			AdmissionCreates: 500, AdmissionOperators: []int{1, 10, 30},
		},
		Share: "10,90", Timeout: time.Hour, IOStreams: streams,
	}
}

// benchLong is the help text of `caravan bench`.
const benchLong = `Measure Caravan on a local cluster that the bench starts (and stops) itself; it
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
           sets in one burst, moved to the second operator, whose kits wrap the
           images the pods run: no build, no pod started.
  runtime  (opt-in) a timer route as real JVMs on the process node: seconds to the
           first message (kit built cold, one dependency more with a warm cache,
           N on a kit that exists), and idle RSS and CPU, each beside the floor:
           the same route, jars and Java started directly on this machine. Then
           --runtime-moves running JVMs moved in a canary of two waves to an
           operator that makes the same kits (pods kept: restarts and timer ticks
           missing from the logs), and on to one of another base image, which
           builds its own kits (pods roll): each wave's and move's time.
  nodes    (opt-in, runs first) the local cluster's two nodes of real pods, the
           process node and the kubelet node (as root), each on a cluster of
           its own, one after the other: up to ready, the idle memory and CPU
           of the node's own processes, the first message of a timer route on
           a kit built cold, then of --runtime-integrations on that kit.
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
run builds the cluster binaries (several minutes).`

// benchExample holds the examples of `caravan bench`.
const benchExample = `  # Rollout and hand-off at the default scale
  caravan bench

  # Everything, smaller, into a directory of your choice
  caravan bench --scenarios rollout,share,handoff,build -N 200 --share-integrations 1000 --out /tmp/perf

  # The scaling curves: the rollout at three N, then at four M (opt-in, long)
  caravan bench --scenarios rollout --sweep-integrations 1000,2500,5000 --sweep-operators 1,3,10,30`

// runE runs the bench; a sweep alone runs no scenario unless --scenarios asks for some.
func (o *BenchOptions) runE(cmd *cobra.Command, args []string) error {
	b := &o.Bench
	if (len(b.SweepIntegrations)+len(b.SweepOperators)+len(b.SweepCPULimits) > 0 || b.SweepHostProcesses) && !cmd.Flags().Changed("scenarios") {
		b.Scenarios = nil
	}
	return cmdutil.RunE(o)(cmd, args)
}

// AddFlags registers the bench's flags on f.
func (o *BenchOptions) AddFlags(f *pflag.FlagSet) {
	b := &o.Bench
	f.StringSliceVar(&b.Scenarios, "scenarios", b.Scenarios, "scenarios to run: rollout, share, handoff, build, runtime, nodes, admission, recovery, malformed")
	// -n is kubectl's --namespace on every command.
	f.IntVarP(&b.Integrations, "integrations", "N", b.Integrations, "integrations of the rollout")
	f.IntVar(&b.RolloutRuns, "rollout-runs", b.RolloutRuns,
		"times the rollout, and each point of a sweep, runs (floor, bare operator and Caravan each time); the figures are the median run's, with every run's times")
	f.BoolVar(&b.SkipAdmission, "skip-admission", false,
		"run the operators without the admission policies of caravan install: they mirror the operator-id label themselves")
	f.BoolVar(&b.RolloutFlows, "rollout-flows", false,
		"give the rollout's integrations flows (a ConfigMap each) instead of running the pre-built image alone")
	f.BoolVar(&b.ProfileOperators, "profile-operators", false,
		"take every operator's CPU profile over the rollout (operators-caravan.pprof); each operator pays for its profiles, so its CPU figures include them")
	f.IntVar(&b.Operators, "operators", b.Operators, "operators of the rollout (the hand-off uses the first two)")
	f.StringVar(&o.Share, "share", o.Share, "split of the share scenario between two operators, in percent")
	f.IntVar(&b.ShareIntegrations, "share-integrations", b.ShareIntegrations, "integrations of the share scenario")
	f.IntVar(&b.HandoffIntegrations, "handoff-integrations", b.HandoffIntegrations, "integrations moved at once in the hand-off scenario")
	f.Int32Var(&b.HandoffReplicas, "handoff-replicas", b.HandoffReplicas, "replicas of each moved integration")
	f.IntVar(&b.BuildIntegrations, "build-integrations", b.BuildIntegrations, "integrations of the build scenario")
	f.IntVar(&b.BuildDependencySets, "build-dependency-sets", b.BuildDependencySets, "distinct dependency sets of the build scenario")
	f.IntVar(&b.RuntimeIntegrations, "runtime-integrations", b.RuntimeIntegrations, "integrations the runtime scenario starts on a kit that exists, one at a time (and floor runs)")
	f.IntVar(&b.RuntimeMoves, "runtime-moves", b.RuntimeMoves, "running integrations the runtime scenario moves between operators in canaries of two waves")
	f.IntVar(&b.AdmissionCreates, "admission-creates", b.AdmissionCreates, "integrations the admission scenario creates at each point")
	f.IntSliceVar(&b.AdmissionOperators, "admission-operators", b.AdmissionOperators,
		"operators registered at each point of the admission scenario")
	f.IntSliceVar(&b.SweepIntegrations, "sweep-integrations", nil,
		"after the scenarios, run the rollout at each of these N (1000,2500,5000) over --operators operators; prints its expected duration first")
	f.IntSliceVar(&b.SweepOperators, "sweep-operators", nil,
		"after the scenarios, run the rollout of -N integrations over each of these M operators (1,3,10,30)")
	f.BoolVar(&b.SweepHostProcesses, "sweep-operators-as-processes", false,
		"after the scenarios, run the rollout of -N integrations over --operators operators as pods of the process node, then as processes of this machine (the operator's identity, none of the pod's limits)")
	f.StringSliceVar(&b.SweepCPULimits, "sweep-cpu-limits", nil,
		"after the scenarios, run the rollout of -N integrations over --operators operators whose CPU limit is each of these (1,2); the operator runs as many Go processors as its limit")
	f.StringVar(&b.Out, "out", "", "directory for bench.json and the PNGs (default docs/perf when it exists here, else a new temporary directory)")
	f.DurationVar(&o.Timeout, "timeout", o.Timeout, "give up after this long (the cluster is cleaned up all the same)")
}

// Validate checks the bench's options against each other.
func (o *BenchOptions) Validate() error { return o.Bench.Validate() }

// Complete resolves the binary, the share split, the output directory and where progress and
// tables go.
func (o *BenchOptions) Complete() error {
	binary, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the caravan binary: %w", err)
	}
	b := &o.Bench
	if b.ShareSplit, err = parseSplit(o.Share); err != nil {
		return err
	}
	if b.Out == "" {
		b.Out = "docs/perf"
		if st, err := os.Stat(b.Out); err != nil || !st.IsDir() {
			if b.Out, err = os.MkdirTemp("", "caravan-bench-out-"); err != nil {
				return err
			}
		}
	}
	b.Binary, b.Progress, b.Report = binary, o.ErrOut, o.Out
	return nil
}

// Run runs the bench within the timeout.
func (o *BenchOptions) Run(ctx context.Context) error {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	_, err := bench.Run(ctx, o.Bench)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("the bench did not finish within --timeout %s: %w", o.Timeout, err)
	}
	if err == nil {
		fmt.Fprintf(o.ErrOut, "figures written to %s\n", o.Bench.Out)
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
