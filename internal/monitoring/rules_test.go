package monitoring_test

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/rules"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/caravan-dev/caravan/internal/metrics"
	"github.com/caravan-dev/caravan/internal/monitoring"
	"github.com/caravan-dev/caravan/internal/monitoring/ruletest"
)

// targetLabels are the labels the PodMonitor gives every series of an operator pod (a series
// that serves monitoring.IDLabel keeps its own: TestThePodMonitorGivesEachSeriesItsOperatorsID).
var targetLabels = []string{"job", "namespace", "pod", "container", "endpoint", monitoring.IDLabel}

// series is a load line of promqltest: metric name of operator id's pod, with the labels the
// operator serves (served, as `a="b", ...`) and those the PodMonitor adds, then its values.
// A label the series serves wins over the target's (honorLabels).
func series(name, id, pod, served, values string) string {
	all := []string{}
	if served != "" {
		all = append(all, served)
	}
	for _, l := range [][2]string{{"job", monitoring.Job}, {"namespace", id}, {"pod", pod}, {"container", "operator"}, {"endpoint", "metrics"}, {monitoring.IDLabel, id}} {
		if !strings.Contains(", "+served, ", "+l[0]+"=") {
			all = append(all, fmt.Sprintf("%s=%q", l[0], l[1]))
		}
	}
	return fmt.Sprintf("%s{%s} %s", name, strings.Join(all, ", "), values)
}

// caravan is a load line of a series operator id serves, with its operator_id label.
func caravan(name, id, served, values string) string {
	l := fmt.Sprintf("operator_id=%q", id)
	if served != "" {
		l += ", " + served
	}
	return series(name, id, id+"-0", l, values)
}

func up(id, pod, values string) string { return series("up", id, pod, "", values) }

func leader(id, pod, values string) string {
	return series("leader_election_master_status", id, pod, fmt.Sprintf("name=%q", id+"-lock"), values)
}

// A ruleCase loads series, evaluates alert every minute until at and expects the alerts of
// the label sets firing (alertname and severity left out) to fire, and no other.
type ruleCase struct {
	name   string
	alert  string
	series []string
	at     time.Duration
	firing []string
}

var ruleCases = []ruleCase{
	{name: "an operator whose only replica fails its scrapes is down", alert: "CaravanOperatorDown",
		series: []string{up("a", "a-0", "1x30"), up("b", "b-0", "0x30")}, at: 10 * time.Minute,
		firing: []string{`{operator_id="b"}`}},
	{name: "an operator with one replica of two answering is not down", alert: "CaravanOperatorDown",
		series: []string{up("b", "b-0", "0x30"), up("b", "b-1", "1x30")}, at: 10 * time.Minute},
	{name: "an operator down for two minutes is not yet down", alert: "CaravanOperatorDown",
		series: []string{up("a", "a-0", "1 1 1 1 1 1 0 0 0")}, at: 8 * time.Minute},
	{name: "no operator target at all is an absence", alert: "CaravanOperatorsAbsent",
		series: []string{`up{job="kubelet", instance="node-0"} 1x30`}, at: 20 * time.Minute,
		firing: []string{`{job="caravan-operator"}`}},
	{name: "an operator target, even down, is no absence", alert: "CaravanOperatorsAbsent",
		series: []string{up("a", "a-0", "0x30")}, at: 20 * time.Minute},
	{name: "an operator whose replica lost its lease has no leader", alert: "CaravanOperatorNoLeader",
		series: []string{up("a", "a-0", "1x30"), leader("a", "a-0", "1 1 0x28"), up("b", "b-0", "1x30"), leader("b", "b-0", "1x30")},
		at:     10 * time.Minute, firing: []string{`{operator_id="a"}`}},
	{name: "an operator of standbys only has no leader", alert: "CaravanOperatorNoLeader",
		series: []string{up("a", "a-0", "1x30"), up("a", "a-1", "1x30")}, at: 10 * time.Minute,
		firing: []string{`{operator_id="a"}`}},
	{name: "an operator led by one replica of two has a leader", alert: "CaravanOperatorNoLeader",
		series: []string{up("a", "a-0", "1x30"), leader("a", "a-0", "1x30"), up("a", "a-1", "1x30")}, at: 10 * time.Minute},
	{name: "an operator that is down is not also leaderless", alert: "CaravanOperatorNoLeader",
		series: []string{up("a", "a-0", "0x30")}, at: 10 * time.Minute},
	{name: "a leader that renewed five minutes ago lags", alert: "CaravanRegistrationLagging",
		series: []string{
			series("caravan_registration_heartbeat_timestamp_seconds", "a", "a-0", `operator_id="a"`, "0+60x5 300x25"),
			series("caravan_registration_stale_after_seconds", "a", "a-0", `operator_id="a"`, "30x30"),
			series("caravan_registration_heartbeat_timestamp_seconds", "b", "b-0", `operator_id="b"`, "0+60x30"),
			series("caravan_registration_stale_after_seconds", "b", "b-0", `operator_id="b"`, "30x30"),
		},
		at: 10 * time.Minute, firing: []string{`{operator_id="a"}`}},
	{name: "a standby that never renewed does not lag", alert: "CaravanRegistrationLagging",
		series: []string{
			series("caravan_registration_heartbeat_timestamp_seconds", "a", "a-0", `operator_id="a"`, "0+60x30"),
			series("caravan_registration_stale_after_seconds", "a", "a-0", `operator_id="a"`, "30x30"),
			series("caravan_registration_heartbeat_timestamp_seconds", "a", "a-1", `operator_id="a"`, "0x30"),
			series("caravan_registration_stale_after_seconds", "a", "a-1", `operator_id="a"`, "0x30"),
		},
		at: 10 * time.Minute},
	{name: "integrations of an operator with a stale heartbeat are orphans", alert: "CaravanOrphanedResources",
		series: []string{
			caravan("caravan_orphaned_resources", "camel-k", `kind="Integration", reason="HeartbeatStale"`, "2x30"),
			caravan("caravan_orphaned_resources", "camel-k", `kind="Integration", reason="NotRegistered"`, "0x30"),
			caravan("caravan_orphaned_resources", "camel-k", `kind="Pipe", reason="HeartbeatStale"`, "0x30"),
		},
		at: 15 * time.Minute, firing: []string{`{kind="Integration", reason="HeartbeatStale"}`}},
	{name: "no orphans is silent", alert: "CaravanOrphanedResources",
		series: []string{caravan("caravan_orphaned_resources", "camel-k", `kind="Integration", reason="NotRegistered"`, "0x30")},
		at:     15 * time.Minute},
	{name: "a move waiting ten minutes for its release is not released", alert: "CaravanMoveNotReleased",
		series: []string{caravan("caravan_integrations_awaiting_release", "b", "", "3x30")}, at: 10 * time.Minute,
		firing: []string{`{operator_id="b"}`}},
	{name: "a release that came after three minutes is silent", alert: "CaravanMoveNotReleased",
		series: []string{caravan("caravan_integrations_awaiting_release", "b", "", "3 3 3 0x27")}, at: 10 * time.Minute},
	{name: "an adoption after an expiry is a takeover", alert: "CaravanOperatorTakeover",
		series: []string{
			caravan("caravan_integration_adoptions_total", "b", `after="expiry"`, "0 0 0 4x27"),
			caravan("caravan_integration_adoptions_total", "b", `after="release"`, "0x30"),
		},
		at: 5 * time.Minute, firing: []string{`{operator_id="b"}`}},
	{name: "adoptions after releases are no takeover", alert: "CaravanOperatorTakeover",
		series: []string{
			caravan("caravan_integration_adoptions_total", "b", `after="expiry"`, "0x30"),
			caravan("caravan_integration_adoptions_total", "b", `after="release"`, "0+5x30"),
		},
		at: 20 * time.Minute},
	{name: "twelve platform errors a minute fail reconciles", alert: "CaravanReconcileErrors",
		series: []string{
			caravan("camel_k_reconciliation_duration_seconds_count", "a", `namespace="apps", group="camel.apache.org", version="v1", kind="Integration", result="Errored", tag="PlatformError"`, "0+12x40"),
			caravan("camel_k_reconciliation_duration_seconds_count", "a", `namespace="apps", group="camel.apache.org", version="v1", kind="Integration", result="Reconciled", tag=""`, "0+60x40"),
		},
		at: 30 * time.Minute, firing: []string{`{kind="Integration", operator_id="a", tag="PlatformError"}`}},
	{name: "user errors count too", alert: "CaravanReconcileErrors",
		series: []string{caravan("camel_k_reconciliation_duration_seconds_count", "a", `namespace="apps", group="camel.apache.org", version="v1", kind="Pipe", result="Errored", tag="UserError"`, "0+12x40")},
		at:     30 * time.Minute, firing: []string{`{kind="Pipe", operator_id="a", tag="UserError"}`}},
	{name: "three errors a minute stay below the rate", alert: "CaravanReconcileErrors",
		series: []string{caravan("camel_k_reconciliation_duration_seconds_count", "a", `namespace="apps", group="camel.apache.org", version="v1", kind="Integration", result="Errored", tag="PlatformError"`, "0+3x40")},
		at:     30 * time.Minute},
	{name: "many reconciles without error are silent", alert: "CaravanReconcileErrors",
		series: []string{caravan("camel_k_reconciliation_duration_seconds_count", "a", `namespace="apps", group="camel.apache.org", version="v1", kind="Integration", result="Requeued", tag=""`, "0+120x40")},
		at:     30 * time.Minute},
	{name: "a failed build attempt a minute is failing builds", alert: "CaravanBuildsFailing",
		series: []string{caravan("camel_k_build_duration_seconds_count", "a", `result="Error"`, "0+1x40")}, at: 30 * time.Minute,
		firing: []string{`{operator_id="a"}`}},
	{name: "attempts that will be retried count too", alert: "CaravanBuildsFailing",
		series: []string{
			caravan("camel_k_build_duration_seconds_count", "a", `result="Failed"`, "0+1x40"),
			caravan("camel_k_build_duration_seconds_count", "b", `result="Succeeded"`, "0+1x40"),
		},
		at: 30 * time.Minute, firing: []string{`{operator_id="a"}`}},
	{name: "two failed attempts in half an hour are not", alert: "CaravanBuildsFailing",
		series: []string{
			caravan("camel_k_build_duration_seconds_count", "a", `result="Error"`, "0 1 2x38"),
			caravan("camel_k_build_duration_seconds_count", "a", `result="Succeeded"`, "0+10x40"),
		},
		at: 30 * time.Minute},
}

// TestTheAlertsFireWhenTheyShould evaluates the generated PrometheusRule with Prometheus' own
// rule engine on series shaped as the operators serve them and the PodMonitor labels them.
func TestTheAlertsFireWhenTheyShould(t *testing.T) {
	groups := ruletest.Rules(t)
	shapes := servedLabels(t)
	tested := map[string]bool{}
	for _, c := range ruleCases {
		t.Run(c.name, func(t *testing.T) {
			checkShapes(t, c.series, shapes)
			rule, ok := groups[c.alert]
			if !ok {
				t.Fatalf("no rule %s", c.alert)
			}
			tested[c.alert] = true
			firing := ruletest.Evaluate(t, rule, c.series, c.at)
			var got []string
			for _, a := range firing {
				got = append(got, labels.NewBuilder(a.Labels).Del("alertname", "severity").Labels().String())
				checkAnnotations(t, a)
			}
			if !slices.Equal(got, c.firing) {
				t.Errorf("%s fires for %v at %s, want %v", c.alert, got, c.at, c.firing)
			}
		})
	}
	for _, a := range monitoring.Alerts {
		if !tested[a.Name] {
			t.Errorf("no case evaluates alert %s", a.Name)
		}
	}
}

// checkAnnotations fails when a fired alert's annotations left a label out or point at no runbook.
func checkAnnotations(t *testing.T, a *rules.Alert) {
	t.Helper()
	for _, key := range []string{"summary", "description", "runbook_url"} {
		v := a.Annotations.Get(key)
		if v == "" || strings.Contains(v, "<no value>") || strings.Contains(v, "error expanding") {
			t.Errorf("annotation %s of %s is %q", key, a.Labels, v)
		}
	}
	a.Labels.Range(func(l labels.Label) {
		if l.Name != "alertname" && l.Name != "severity" && l.Name != "job" && !strings.Contains(a.Annotations.Get("description"), l.Value) {
			t.Errorf("the description of %s does not name its %s: %q", a.Labels, l.Name, a.Annotations.Get("description"))
		}
	})
}

// standardLabels are the label names of the series the alerts query besides the operators' own:
// Prometheus' up of each target, and controller-runtime's leader gauge, of each lease.
var standardLabels = map[string][]string{"up": nil, "leader_election_master_status": {"name"}}

var descLabels = regexp.MustCompile(`fqName: "([a-z_]+)".*constLabels: \{([^}]*)\}, variableLabels: \{([^}]*)\}\}$`)

// servedLabels are the label names, sorted, of each metric an operator serves, from the
// descriptions of its collectors, and of the standard series in standardLabels.
func servedLabels(t *testing.T) map[string][]string {
	t.Helper()
	descs, err := metrics.Descriptions()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, d := range descs {
		m := descLabels.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot read description %s", d)
		}
		var names []string
		for _, pair := range strings.Split(m[2], ",") {
			if name, _, ok := strings.Cut(pair, "="); ok {
				names = append(names, name)
			}
		}
		if m[3] != "" {
			names = append(names, strings.Split(m[3], ",")...)
		}
		slices.Sort(names)
		out[m[1]] = names
	}
	leaderGauge := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "leader_election_master_status",
		Help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. " +
			"'name' is the string used to identify the lease. Please make sure to group by name."}, standardLabels["leader_election_master_status"])
	if err := ctrlmetrics.Registry.Register(leaderGauge); !errors.As(err, &prometheus.AlreadyRegisteredError{}) {
		t.Fatalf("controller-runtime's registry serves no leader_election_master_status of labels %v: %v",
			standardLabels["leader_election_master_status"], err)
	}
	for name, l := range standardLabels {
		out[name] = l
	}
	return out
}

// mayBeEmpty are the labels an operator serves empty on some series (tag, of a reconcile
// without error), which Prometheus then stores without them.
var mayBeEmpty = []string{"tag"}

// checkShapes fails when a loaded series is of a metric no operator serves, or has other labels
// than the operator and the PodMonitor give it.
func checkShapes(t *testing.T, series []string, served map[string][]string) {
	t.Helper()
	for _, s := range series {
		desc, _, _ := strings.Cut(s, "} ")
		l, err := ruletest.PromQL.ParseMetric(desc + "}")
		if err != nil {
			t.Fatalf("series %s: %v", s, err)
		}
		if l.Get("job") != monitoring.Job {
			continue // another job's series, which no rule should see
		}
		name := servedName(l.Get(labels.MetricName), served)
		want, ok := served[name]
		if !ok {
			t.Errorf("series %s is of metric %s, which no operator serves", s, name)
			continue
		}
		var got []string
		l.Range(func(l labels.Label) {
			if l.Name != labels.MetricName && !slices.Contains(targetLabels, l.Name) {
				got = append(got, l.Name)
			}
		})
		slices.Sort(got)
		if !slices.Equal(got, slices.DeleteFunc(slices.Clone(want), func(name string) bool {
			return slices.Contains(targetLabels, name) || !slices.Contains(got, name) && slices.Contains(mayBeEmpty, name)
		})) {
			t.Errorf("series %s has labels %v, the operators serve %s with %v", s, got, name, want)
		}
	}
}

// servedName is the metric of series name: name, or the histogram whose _count, _sum or
// _bucket it is.
func servedName(name string, served map[string][]string) string {
	for _, suffix := range []string{"_count", "_sum", "_bucket"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if _, ok := served[base]; ok {
				return base
			}
		}
	}
	return name
}

// TestEachAlertHasARunbookUnderTheProjectHome holds runbook_url to docs/runbooks and
// monitoring.ProjectHome to the chart's home.
func TestEachAlertHasARunbookUnderTheProjectHome(t *testing.T) {
	chart, err := os.ReadFile("../../deploy/helm/caravan/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(chart), "\nhome: "+monitoring.ProjectHome+"\n") {
		t.Errorf("the chart's home is not monitoring.ProjectHome %s", monitoring.ProjectHome)
	}
	for name, r := range ruletest.Rules(t) {
		path := "docs/runbooks/" + name + ".md"
		if r.Annotations["runbook_url"] != monitoring.ProjectHome+"/blob/main/"+path {
			t.Errorf("alert %s has runbook_url %q", name, r.Annotations["runbook_url"])
		}
		page, err := os.ReadFile("../../" + path)
		if err != nil {
			t.Errorf("alert %s has no runbook: %v", name, err)
		} else if !strings.HasPrefix(string(page), "# "+name+"\n") {
			t.Errorf("%s does not open with the heading # %s", path, name)
		}
	}
}

// TestThePodMonitorGivesEachSeriesItsOperatorsID applies the PodMonitor's relabelings as
// Prometheus does to a target of an operator pod: every series gets the pod's operator id,
// and with honorLabels the operator's own series keep the id they serve.
func TestThePodMonitorGivesEachSeriesItsOperatorsID(t *testing.T) {
	endpoint := ruletest.ScrapeEndpoint(t)
	if !endpoint.HonorLabels {
		t.Errorf("honorLabels is false: the operators' own series would get exported_%s", monitoring.IDLabel)
	}
	target := endpoint.Target(t, ruletest.Pod{Namespace: "ops", Name: "team-a-operator-0",
		Labels: map[string]string{"app.kubernetes.io/name": monitoring.Job, "app.kubernetes.io/instance": "team-a"}})
	if got := target.Get(monitoring.IDLabel); got != "team-a" {
		t.Errorf("the target's %s is %q, want the pod's app.kubernetes.io/instance team-a", monitoring.IDLabel, got)
	}
	if got := target.Get("job"); got != monitoring.Job {
		t.Errorf("the target's job is %q, want %s", got, monitoring.Job)
	}
}
