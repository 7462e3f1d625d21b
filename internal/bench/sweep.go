package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/bench/result"
	"github.com/caravan-dev/caravan/internal/install"
)

// sweepSecondsPerThousand is about how long one rollout point takes per
// thousand integrations on a two-core machine: the floor, Caravan and the
// bare operator, each created, made ready and deleted.
const sweepSecondsPerThousand = 240

// sweepSecondsPerOperator is about how long starting one operator takes.
const sweepSecondsPerOperator = 4

// SweepEstimate is about how long the sweeps of o take on a two-core
// machine, in whole minutes, which the bench prints before it starts them.
func SweepEstimate(o Options) time.Duration {
	seconds := 0
	runs := max(o.RolloutRuns, 1)
	for _, n := range o.SweepIntegrations {
		seconds += runs * n * sweepSecondsPerThousand / 1000
	}
	seconds += o.Operators * sweepSecondsPerOperator
	for _, m := range o.SweepOperators {
		seconds += runs*o.Integrations*sweepSecondsPerThousand/1000 + m*sweepSecondsPerOperator
	}
	for range o.SweepCPULimits {
		seconds += runs*o.Integrations*sweepSecondsPerThousand/1000 + o.Operators*sweepSecondsPerOperator
	}
	if o.SweepHostProcesses {
		seconds += len(runAs) * (runs*o.Integrations*sweepSecondsPerThousand/1000 + o.Operators*sweepSecondsPerOperator)
	}
	minutes := (seconds + 59) / 60
	return time.Duration(minutes) * time.Minute
}

// How the operators of the sweep over it run: pods of the process node, then processes of this
// machine, with the identity of their ServiceAccount and none of the pod's limits.
const (
	runAsPods      = "pods"
	runAsProcesses = "processes"
)

var runAs = []string{runAsPods, runAsProcesses}

// runSweeps runs the rollout at each N of o.SweepIntegrations, over
// o.Operators operators, then at each M of o.SweepOperators, with
// o.Integrations integrations. Each point measures Caravan, the bare
// operator and the floor side by side, o.RolloutRuns times, and keeps the
// median run. Each M runs on a set of its own; the operators of the set
// before are stopped first, so that idle operators do not load the point.
func runSweeps(ctx context.Context, e *env, o Options, res *result.Results) error {
	if len(o.SweepIntegrations) > 0 {
		ops, err := e.operatorSet(ctx, "bench", o.Operators)
		if err != nil {
			return err
		}
		for _, n := range o.SweepIntegrations {
			fmt.Fprintf(e.progress, "sweep: N=%d, M=%d\n", n, len(ops))
			r, err := runRollouts(ctx, e, ops, n, o.RolloutRuns)
			if err != nil {
				return fmt.Errorf("N=%d: %w", n, err)
			}
			res.SweepIntegrations = append(res.SweepIntegrations, sweepPoint(r))
		}
	}
	for _, l := range o.SweepCPULimits {
		limit := resource.MustParse(l)
		p, err := e.sweepPointOn(ctx, o, "sweep-cpu-"+strings.ReplaceAll(l, ".", "-"), "the operators' CPU limit "+l, func(c *install.Config) {
			r := benchResources()
			r.Limits[corev1.ResourceCPU] = limit
			c.Resources = r
		})
		if err != nil {
			return err
		}
		p.CPULimit = l
		res.SweepCPULimits = append(res.SweepCPULimits, p)
	}
	if o.SweepHostProcesses {
		for _, as := range runAs {
			e.hostProcesses = as == runAsProcesses
			p, err := e.sweepPointOn(ctx, o, "sweep-"+as, "the operators as "+as, nil)
			e.hostProcesses = false
			if err != nil {
				return err
			}
			p.RunAs = as
			res.SweepRunAs = append(res.SweepRunAs, p)
		}
	}
	for _, m := range o.SweepOperators {
		e.stopSets()
		ops, err := e.operatorSet(ctx, fmt.Sprintf("sweep-m%d", m), m)
		if err != nil {
			return fmt.Errorf("M=%d: %w", m, err)
		}
		fmt.Fprintf(e.progress, "sweep: N=%d, M=%d\n", o.Integrations, m)
		r, err := runRollouts(ctx, e, ops, o.Integrations, o.RolloutRuns)
		if err != nil {
			return fmt.Errorf("M=%d: %w", m, err)
		}
		res.SweepOperators = append(res.SweepOperators, sweepPoint(r))
	}
	return nil
}

// sweepPointOn runs the rollout of o.Integrations over o.Operators operators of a new set, the
// operators of the sets before stopped, configure changing what is installed; what names the point.
func (e *env) sweepPointOn(ctx context.Context, o Options, set, what string, configure func(*install.Config)) (result.SweepPoint, error) {
	e.stopSets()
	ops, err := e.operatorSetWith(ctx, set, o.Operators, configure)
	if err != nil {
		return result.SweepPoint{}, fmt.Errorf("%s: %w", what, err)
	}
	fmt.Fprintf(e.progress, "sweep: N=%d, M=%d, %s\n", o.Integrations, len(ops), what)
	r, err := runRollouts(ctx, e, ops, o.Integrations, o.RolloutRuns)
	if err != nil {
		return result.SweepPoint{}, fmt.Errorf("%s: %w", what, err)
	}
	return sweepPoint(r), nil
}

// sweepPoint keeps of a rollout what the sweeps compare.
func sweepPoint(r *result.Rollout) result.SweepPoint {
	n, m := float64(r.Integrations), float64(r.Operators)
	return result.SweepPoint{
		Integrations: r.Integrations, Operators: r.Operators,
		FloorSeconds: r.FloorSeconds, CaravanSeconds: r.CaravanSeconds, BareSeconds: r.Bare.Seconds,
		Ratio: r.Ratio, BareRatio: r.Bare.Ratio,
		CaravanCreateSeconds: r.CaravanCreateSeconds, FloorCreateSeconds: r.FloorCreateSeconds,
		CPUMillisPerIntegration:       measure.MillisEach(operatorsCPU(r), r.Integrations),
		HeapKiBPerIntegration:         measure.Round3(measure.Ratio(r.All.PeakHeapMiB*1024, n)),
		RSSMiBPerOperator:             measure.Round3(measure.Ratio(r.All.PeakRSSMiB, m)),
		OwnMiBPerOperator:             measure.Round3(measure.Ratio(r.All.PeakOwnMiB, m)),
		IdleOwnMiBPerOperator:         measure.Round3(measure.Ratio(r.All.IdleOwnMiB, m)),
		WatchEventsPerIntegration:     measure.Round3(measure.Total(r.CaravanWatchEvents)),
		BareWatchEventsPerIntegration: measure.Round3(measure.Total(r.Bare.WatchEvents)),
		Runs:                          r.Runs,
	}
}

// operatorsCPU is all operators' CPU over Caravan's phase of the rollout:
// the median of its runs' (the lower of the two middle ones, by nearest
// rank) when it ran several times.
func operatorsCPU(r *result.Rollout) float64 {
	if len(r.Runs) == 0 {
		return r.All.CPUSeconds
	}
	cpu := make([]float64, len(r.Runs))
	for i, run := range r.Runs {
		cpu[i] = run.OperatorsCPUSeconds
	}
	return measure.Summarize(cpu).P50
}

// stopSets stops the operators of every set started so far and forgets
// the sets.
func (e *env) stopSets() {
	for name, ops := range e.sets {
		fmt.Fprintf(e.progress, "stopping the %d operators of set %s\n", len(ops), name)
		for _, op := range ops {
			op.stop()
		}
		delete(e.sets, name)
	}
}
