// Package ruletest evaluates Caravan's alerting rules with Prometheus' own rule engine, on
// series labelled as the PodMonitor labels a scrape. Tests use it; the binaries do not.
package ruletest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/relabel"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/caravan-dev/caravan/internal/metrics"
	"github.com/caravan-dev/caravan/internal/monitoring"
)

// PromQL parses as Prometheus does by default.
var PromQL = parser.NewParser(parser.Options{})

// Rules are the alerting rules of the PrometheusRule that monitoring.Objects makes, by name, as
// Prometheus loads them from a rule file.
func Rules(t testing.TB) map[string]rulefmt.Rule {
	t.Helper()
	var groups []any
	for _, u := range objectsOfKind(t, "PrometheusRule") {
		groups, _, _ = unstructured.NestedSlice(u.Object, "spec", "groups")
	}
	file, err := yaml.Marshal(map[string]any{"groups": groups})
	if err != nil {
		t.Fatal(err)
	}
	parsed, errs := rulefmt.Parse(file, false, model.UTF8Validation, PromQL, nil)
	if len(errs) > 0 {
		t.Fatalf("Prometheus refuses the rules: %v\n%s", errors.Join(errs...), file)
	}
	out := map[string]rulefmt.Rule{}
	for _, g := range parsed.Groups {
		for _, r := range g.Rules {
			out[r.Alert] = r
		}
	}
	return out
}

// Evaluate loads series (load lines of promqltest, one a minute), evaluates a fresh copy of
// rule every minute from 0 to at and returns the alerts firing at the end, sorted by labels.
func Evaluate(t testing.TB, r rulefmt.Rule, series []string, at time.Duration) []*rules.Alert {
	t.Helper()
	expr, err := PromQL.ParseExpr(r.Expr)
	if err != nil {
		t.Fatal(err)
	}
	rule := rules.NewAlertingRule(r.Alert, expr, time.Duration(r.For), 0, labels.FromMap(r.Labels),
		labels.FromMap(r.Annotations), labels.EmptyLabels(), "", true, nil)
	storage := promqltest.LoadedStorage(t, "load 1m\n  "+strings.Join(series, "\n  "))
	query := rules.EngineQueryFunc(promqltest.NewTestEngine(t, false, 0, 100000), storage)
	for ts := time.Duration(0); ts <= at; ts += time.Minute {
		if _, err := rule.Eval(context.Background(), 0, time.Unix(0, 0).Add(ts), query, nil, 0); err != nil {
			t.Fatalf("evaluating %s at %s: %v", r.Alert, ts, err)
		}
	}
	var firing []*rules.Alert
	for _, a := range rule.ActiveAlerts() {
		if a.State == rules.StateFiring {
			firing = append(firing, a)
		}
	}
	slices.SortFunc(firing, func(a, b *rules.Alert) int { return labels.Compare(a.Labels, b.Labels) })
	return firing
}

// Endpoint is the PodMonitor's one metrics endpoint, as Prometheus scrapes it.
type Endpoint struct {
	// JobLabel is the pod label whose value is the job label.
	JobLabel string
	// HonorLabels keeps a label the series serves over the target's of the same name.
	HonorLabels bool
	Relabelings []*relabel.Config
}

// ScrapeEndpoint reads the endpoint of the PodMonitor that monitoring.Objects makes, its
// relabelings translated as the Prometheus Operator writes them into Prometheus' configuration.
func ScrapeEndpoint(t testing.TB) Endpoint {
	t.Helper()
	var endpoints []any
	var jobLabel string
	for _, u := range objectsOfKind(t, "PodMonitor") {
		endpoints, _, _ = unstructured.NestedSlice(u.Object, "spec", "podMetricsEndpoints")
		jobLabel, _, _ = unstructured.NestedString(u.Object, "spec", "jobLabel")
	}
	if len(endpoints) != 1 {
		t.Fatalf("the PodMonitor has %d endpoints, want 1", len(endpoints))
	}
	endpoint, _ := endpoints[0].(map[string]any)
	honor, _ := endpoint["honorLabels"].(bool)
	relabelings, _ := endpoint["relabelings"].([]any)
	out := Endpoint{JobLabel: jobLabel, HonorLabels: honor}
	for _, r := range relabelings {
		r, _ := r.(map[string]any)
		c := relabel.DefaultRelabelConfig
		action, _ := r["action"].(string)
		c.Action = relabel.Action(action)
		c.TargetLabel, _ = r["targetLabel"].(string)
		sources, _ := r["sourceLabels"].([]any)
		for _, name := range sources {
			s, _ := name.(string)
			c.SourceLabels = append(c.SourceLabels, model.LabelName(s))
		}
		if err := c.Validate(model.UTF8Validation); err != nil {
			t.Fatalf("Prometheus refuses relabeling %v: %v", r, err)
		}
		out.Relabelings = append(out.Relabelings, &c)
	}
	return out
}

// A Pod is an operator pod that the PodMonitor selects.
type Pod struct {
	Namespace, Name string
	// Labels are the pod's labels: app.kubernetes.io/name and app.kubernetes.io/instance.
	Labels map[string]string
}

// Target is the target labels Prometheus gives pod's metrics endpoint: job from the pod's
// JobLabel, namespace, pod, container and endpoint, then the endpoint's relabelings over the
// pod's labels.
func (e Endpoint) Target(t testing.TB, pod Pod) labels.Labels {
	t.Helper()
	b := labels.NewBuilder(labels.FromStrings("__meta_kubernetes_namespace", pod.Namespace, "__meta_kubernetes_pod_name", pod.Name,
		"job", pod.Labels[e.JobLabel], "namespace", pod.Namespace, "pod", pod.Name,
		"container", "operator", "endpoint", "metrics"))
	for k, v := range pod.Labels {
		b.Set("__meta_kubernetes_pod_label_"+strings.NewReplacer(".", "_", "/", "_", "-", "_").Replace(k), v)
	}
	if !relabel.ProcessBuilder(b, e.Relabelings...) {
		t.Fatalf("the PodMonitor's relabelings drop pod %s/%s", pod.Namespace, pod.Name)
	}
	b.Labels().Range(func(l labels.Label) {
		if strings.HasPrefix(l.Name, "__") {
			b.Del(l.Name)
		}
	})
	return b.Labels()
}

// Series are the load lines of one scrape of pod, up 1, and every sample of it, each held at its
// value for minutes, labelled as Prometheus stores them: the sample's labels, with the target's
// added (a served label wins when the endpoint honors labels), empty labels left out.
func (e Endpoint) Series(t testing.TB, pod Pod, samples metrics.Samples, minutes int) []string {
	t.Helper()
	target := e.Target(t, pod)
	line := func(name string, served map[string]string, value float64) string {
		b := labels.NewBuilder(labels.EmptyLabels())
		target.Range(func(l labels.Label) { b.Set(l.Name, l.Value) })
		for k, v := range served {
			if !e.HonorLabels && target.Has(k) {
				k = "exported_" + k
			}
			b.Set(k, v) // an empty value deletes, as Prometheus stores it
		}
		b.Set(labels.MetricName, name)
		return fmt.Sprintf("%s %s", promqlSeries(b.Labels()), strings.Repeat(strconv.FormatFloat(value, 'g', -1, 64)+" ", minutes))
	}
	out := []string{line("up", nil, 1)}
	for _, s := range samples {
		out = append(out, line(s.Name, s.Labels, s.Value))
	}
	sort.Strings(out)
	return out
}

// promqlSeries writes l as promqltest's load lines write a series: name{a="b", ...}.
func promqlSeries(l labels.Labels) string {
	var pairs []string
	l.Range(func(l labels.Label) {
		if l.Name != labels.MetricName {
			pairs = append(pairs, fmt.Sprintf("%s=%q", l.Name, l.Value))
		}
	})
	return l.Get(labels.MetricName) + "{" + strings.Join(pairs, ", ") + "}"
}

func objectsOfKind(t testing.TB, kind string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := monitoring.Objects("ops")
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if u, ok := o.(*unstructured.Unstructured); ok && u.GetKind() == kind {
			out = append(out, u)
		}
	}
	if len(out) == 0 {
		t.Fatalf("monitoring.Objects makes no %s", kind)
	}
	return out
}
