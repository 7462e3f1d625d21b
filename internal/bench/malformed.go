package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/bench/result"
	"github.com/caravan-dev/caravan/internal/fixture"
)

// The namespaces of the malformed scenario's two runs.
const (
	validAloneNamespace = "bench-valid-alone"
	malformedNamespace  = "bench-malformed"
)

// quietWindow is how long the malformed scenario watches an operator's
// reconciles once every integration of a run is done.
const quietWindow = 10 * time.Second

// runMalformed measures what bad input costs the valid input beside it,
// on op. It creates n valid integrations in one burst alone, then n valid
// and n malformed ones (each of fixture.Malformations in turn)
// interleaved in one burst. Every malformed one must get Ready=False with
// the reason of its malformation and no Deployment, and the operator must
// not restart.
func runMalformed(ctx context.Context, e *env, op *Operator, n int) (*result.Malformed, error) {
	res := &result.Malformed{Operator: op.ID}
	fmt.Fprintf(e.progress, "malformed: %d valid integrations for %s, alone\n", n, op.ID)
	alone, err := malformedRun(ctx, e, op, validAloneNamespace, n, 0)
	if err != nil {
		return nil, err
	}
	res.Alone = *alone
	fmt.Fprintf(e.progress, "malformed: %d valid and %d malformed integrations for %s, in one burst\n", n, n, op.ID)
	beside, err := malformedRun(ctx, e, op, malformedNamespace, n, n)
	if err != nil {
		return nil, err
	}
	res.Beside = *beside
	res.Ratio = measure.Round3(measure.Ratio(beside.ValidReadySeconds, alone.ValidReadySeconds))
	var problems []string
	if beside.WithReason != n {
		problems = append(problems, fmt.Sprintf("%d of %d malformed integrations have Ready=False with their reason (for example %v)",
			beside.WithReason, n, beside.Wrong))
	}
	for _, r := range []*result.MalformedRun{alone, beside} {
		if r.Deployments != r.Valid {
			problems = append(problems, fmt.Sprintf("%d Deployments for %d valid and %d malformed integrations", r.Deployments, r.Valid, r.Malformed))
		}
		if r.Restarts > 0 {
			problems = append(problems, fmt.Sprintf("the operator's container restarted %d times", r.Restarts))
		}
	}
	if len(problems) > 0 {
		return res, fmt.Errorf("malformed: %v", problems)
	}
	return res, nil
}

// malformedRun creates valid integrations and bad malformed ones in ns,
// interleaved, in one burst. It waits until every valid one is Ready and
// every malformed one Stalled, and takes op's figures over the burst and
// over quietWindow after it. It deletes ns at the end.
func malformedRun(ctx context.Context, e *env, op *Operator, ns string, valid, bad int) (*result.MalformedRun, error) {
	res := &result.MalformedRun{Valid: valid, Malformed: bad, ByReason: map[string]int{}}
	if err := e.createNamespace(ctx, ns); err != nil {
		return nil, err
	}
	w, err := measure.NewWatcher(ctx, e.config, ns, &camelv1.Integration{})
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	ready, err := w.Track(ctx, w.IntegrationReady(ns), nil)
	if err != nil {
		return nil, err
	}
	defer ready.Stop()
	ready.Sweep = measure.ReadyIntegrations(e.client, ns)
	stalled, err := w.Track(ctx, w.IntegrationWith(ns, camelv1.ConditionStalled), nil)
	if err != nil {
		return nil, err
	}
	defer stalled.Stop()
	stalled.Sweep = measure.IntegrationsWith(e.client, ns, camelv1.ConditionStalled)

	malformations := fixture.Malformations()
	want := map[string]string{} // a malformed integration's name → its reason
	var objs []client.Object
	for i := range max(valid, bad) {
		if i < valid {
			objs = append(objs, newIntegration(ns, fmt.Sprintf("valid-%05d", i), op.ID, 1, Image))
		}
		if i < bad {
			m := malformations[i%len(malformations)]
			it := fixture.Malformed(ns, fmt.Sprintf("malformed-%05d", i), op.ID, m)
			want[it.Name] = m.Reason
			objs = append(objs, it)
		}
	}

	restarts, err := containerRestarts(ctx, e, op)
	if err != nil {
		return nil, err
	}
	before, err := op.Scrape(ctx)
	if err != nil {
		return nil, err
	}
	op.resetPeaks()
	start := time.Now()
	if err := createAll(ctx, e.client, objs); err != nil {
		return nil, err
	}
	if err := ready.Wait(ctx, valid, "the valid integrations", e.report("valid ones Ready")); err != nil {
		return nil, err
	}
	res.ValidReadySeconds = measure.Round3(ready.Last().Sub(start).Seconds())
	if bad > 0 {
		if err := stalled.Wait(ctx, bad, "the malformed integrations", e.report("malformed ones Stalled")); err != nil {
			return nil, err
		}
		res.MalformedStalledSeconds = measure.Round3(stalled.Last().Sub(start).Seconds())
	}
	busy, err := op.Scrape(ctx)
	if err != nil {
		return nil, err
	}
	res.PeakOwnMiB = measure.Round3(op.peaksSampled().Own / measure.MiB)
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(quietWindow):
	}
	quiet, err := op.Scrape(ctx)
	if err != nil {
		return nil, err
	}
	b, d, q := measure.CountersOf(before), measure.CountersOf(busy), measure.CountersOf(quiet)
	res.IdleOwnMiB = measure.Round3(b.Own / measure.MiB)
	res.CPUSeconds = measure.Round3(d.CPU - b.CPU)
	res.Reconciles = d.Reconciles - b.Reconciles
	res.QuietSeconds = quietWindow.Seconds()
	res.QuietReconciles = q.Reconciles - d.Reconciles

	if err := checkMalformed(ctx, e, ns, want, res); err != nil {
		return nil, err
	}
	after, err := containerRestarts(ctx, e, op)
	if err != nil {
		return nil, err
	}
	res.Restarts = after - restarts
	return res, e.deleteNamespace(ctx, ns)
}

// checkMalformed counts, in res, the malformed integrations of ns whose
// Ready=False condition has the reason want gives them, and the
// Deployments of ns.
func checkMalformed(ctx context.Context, e *env, ns string, want map[string]string, res *result.MalformedRun) error {
	list := &camelv1.IntegrationList{}
	if err := e.client.List(ctx, list, client.InNamespace(ns)); err != nil {
		return err
	}
	for _, it := range list.Items {
		reason, ok := want[it.Name]
		if !ok {
			continue
		}
		c := meta.FindStatusCondition(it.Status.Conditions, camelv1.ConditionReady)
		if c != nil && c.Status == "False" && c.Reason == reason {
			res.WithReason++
			res.ByReason[reason]++
			continue
		}
		if len(res.Wrong) < 10 {
			got := "no Ready condition"
			if c != nil {
				got = fmt.Sprintf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
			}
			res.Wrong = append(res.Wrong, fmt.Sprintf("%s (want %s): %s", it.Name, reason, got))
		}
	}
	slices.Sort(res.Wrong)
	deployments := &appsv1.DeploymentList{}
	if err := e.client.List(ctx, deployments, client.InNamespace(ns)); err != nil {
		return err
	}
	res.Deployments = len(deployments.Items)
	return nil
}

// containerRestarts is the sum of the restart counts of op's containers.
func containerRestarts(ctx context.Context, e *env, op *Operator) (int, error) {
	statuses, err := op.containerStatuses(ctx)
	n := 0
	for _, cs := range statuses {
		n += int(cs.RestartCount)
	}
	return n, err
}
