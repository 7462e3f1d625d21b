// Package monitoring builds what a Prometheus Operator and a Grafana need to watch
// every Caravan operator of a cluster. That is a PodMonitor of the operators' metrics
// port with the identity it scrapes as, a PrometheusRule with the alerts
// docs/operations.md recommends, and a Grafana dashboard with an operator_id variable,
// in a ConfigMap that Grafana's dashboard sidecar loads. The chart, the kustomize
// component deploy/monitoring and `make generate` take them from here.
package monitoring

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/internal/install"
)

// Names of the monitoring objects.
const (
	PodMonitorName     = "caravan-operators"
	RuleName           = "caravan-operators"
	DashboardConfigMap = "caravan-dashboard"
	// DashboardKey is the key of the dashboard's JSON in its ConfigMap.
	DashboardKey = "caravan.json"
	// DashboardLabel is the label Grafana's dashboard sidecar looks for.
	DashboardLabel = "grafana_dashboard"
	// ScraperName names the ServiceAccount the PodMonitor scrapes as, its ClusterRoleBinding
	// to install.MetricsReaderRole, and, with ScraperTokenSuffix, the Secret of its token.
	ScraperName        = "caravan-metrics-scraper"
	ScraperTokenSuffix = "-token"
)

// Job is the job label of the operators' series: the PodMonitor takes it from their pods'
// app.kubernetes.io/name label, whatever namespace the PodMonitor is in.
const Job = "caravan-operator"

// IDLabel holds an operator's id on each of its series: Caravan's own serve it, and the
// PodMonitor gives it to the others (`up`, controller-runtime's, Go's) from the pod's
// app.kubernetes.io/instance label.
const IDLabel = "operator_id"

// ProjectHome is where the project's source and documentation live: the chart's home and the OLM bundle's links.
const ProjectHome = "https://github.com/caravan-dev/caravan"

// RunbookURL is the address of alert's runbook, docs/runbooks/<alert>.md on the main branch.
func RunbookURL(alert string) string {
	return ProjectHome + "/blob/main/docs/runbooks/" + alert + ".md"
}

// An Alert is one alerting rule.
type Alert struct {
	Name     string
	Expr     string
	For      string
	Severity string
	// Summary is one line; Description says what fired and where, with the labels.
	Summary     string
	Description string
}

// byOperator is the highest value of metric of job Job per operator.
func byOperator(metric string) string {
	return fmt.Sprintf(`max by (%s) (%s{job=%q})`, IDLabel, metric, Job)
}

// upByOperator is 1 for each operator with a replica that answers its scrapes, 0 for one
// with none.
var upByOperator = byOperator("up")

// leaderByOperator is 1 for each operator a replica of which leads. Only a replica that won
// or lost the lease reports controller-runtime's leader_election_master_status; a standby
// reports nothing.
var leaderByOperator = byOperator("leader_election_master_status")

// registrationAge is, per operator, the age of its leader's last renewal at its latest scrape, as a share
// of the registration's life: 1 when the registration counts as gone. Standbys serve 0, and are left out.
const registrationAge = `min by (operator_id) ((timestamp(caravan_registration_heartbeat_timestamp_seconds)` +
	` - (caravan_registration_heartbeat_timestamp_seconds > 0)) / caravan_registration_stale_after_seconds)`

// Alerts are the alerts docs/operations.md recommends, each on metrics the operators serve
// and `up`, which Prometheus records for every target the PodMonitor scrapes.
var Alerts = []Alert{
	{Name: "CaravanOperatorDown", Expr: upByOperator + ` == 0`, For: "5m", Severity: "critical",
		Summary: "Caravan operator {{ $labels.operator_id }} is down",
		Description: "No replica of operator {{ $labels.operator_id }} has answered a metrics scrape for 5 minutes " +
			"(up == 0 on each of its targets of job caravan-operator): nothing reconciles its integrations."},
	{Name: "CaravanOperatorsAbsent", Expr: `absent(up{job="caravan-operator"})`, For: "15m", Severity: "warning",
		Summary: "Prometheus scrapes no Caravan operator",
		Description: "Prometheus has had no target of job caravan-operator for 15 minutes: no operator pod runs, " +
			"or the PodMonitor caravan-operators does not select them."},
	{Name: "CaravanOperatorNoLeader", Expr: upByOperator + " == 1 unless on (operator_id) " + leaderByOperator + " == 1",
		For: "5m", Severity: "critical",
		Summary: "Caravan operator {{ $labels.operator_id }} has no leader",
		Description: "Operator {{ $labels.operator_id }} has replicas that answer scrapes, but none has held its lease " +
			"{{ $labels.operator_id }}-lock for 5 minutes: nothing reconciles its integrations or renews its registration."},
	{Name: "CaravanRegistrationLagging", Expr: registrationAge + " > 0.5", For: "1m", Severity: "warning",
		Summary: "Operator {{ $labels.operator_id }} renews its registration late",
		Description: "Operator {{ $labels.operator_id }} has scraped with a registration heartbeat older than half its life " +
			"(at {{ $value | humanizePercentage }} of it) for a minute: its writes stop before the registration expires, " +
			"and at expiry the operator stops and other operators take its integrations over."},
	{Name: "CaravanOrphanedResources", Expr: `sum by (kind, reason) (caravan_orphaned_resources) > 0`, For: "10m", Severity: "warning",
		Summary: "{{ $value }} {{ $labels.kind }} resources are assigned to an operator that cannot run them",
		Description: "The default operator has counted {{ $value }} {{ $labels.kind }} resources for 10 minutes " +
			"whose operator cannot run them, for reason {{ $labels.reason }} (NotRegistered, HeartbeatStale or NotServingNamespace)."},
	{Name: "CaravanMoveNotReleased", Expr: `max by (operator_id) (caravan_integrations_awaiting_release) > 0`, For: "5m", Severity: "warning",
		Summary: "Operator {{ $labels.operator_id }} waits for integrations to be released",
		Description: "Operator {{ $labels.operator_id }} has waited 5 minutes for a live previous owner to release " +
			"{{ $value }} integrations assigned to it: the move does not complete."},
	{Name: "CaravanOperatorTakeover", Expr: `sum by (operator_id) (increase(caravan_integration_adoptions_total{after="expiry"}[15m])) > 0`,
		Severity: "warning",
		Summary:  "Operator {{ $labels.operator_id }} took integrations over from a vanished operator",
		Description: "Operator {{ $labels.operator_id }} adopted {{ $value }} integrations in 15 minutes whose previous owner's " +
			"registration expired without a release: that operator vanished."},
	{Name: "CaravanReconcileErrors", Expr: `sum by (operator_id, kind, tag) (rate(camel_k_reconciliation_duration_seconds_count{result="Errored"}[10m])) > 0.1`,
		For: "15m", Severity: "warning",
		Summary: "Operator {{ $labels.operator_id }} fails reconciles of {{ $labels.kind }}",
		Description: "Operator {{ $labels.operator_id }} has ended {{ $value | humanize }} reconciles of {{ $labels.kind }} a second " +
			"in error for 15 minutes, tagged {{ $labels.tag }} (PlatformError: a retry may clear it; UserError: bad input)."},
	{Name: "CaravanBuildsFailing", Expr: `sum by (operator_id) (increase(camel_k_build_duration_seconds_count{result=~"Failed|Error"}[30m])) > 3`,
		Severity: "warning",
		Summary:  "Operator {{ $labels.operator_id }} has failing builds",
		Description: "Operator {{ $labels.operator_id }} had {{ $value }} build attempts fail in 30 minutes " +
			"(result Failed, retried, or Error, the build's last)."},
}

// Objects are the PodMonitor, the identity it scrapes as and the PrometheusRule, in
// namespace, and the dashboard's ConfigMap. The operators serve their metrics over HTTPS
// with a self-signed certificate, to a bearer token the API server reviews: the PodMonitor
// sends the token of ServiceAccount ScraperName, which may read the metrics alone.
func Objects(namespace string) ([]client.Object, error) {
	dashboard, err := Dashboard()
	if err != nil {
		return nil, err
	}
	labels := map[string]string{"app.kubernetes.io/name": "caravan-operator", "app.kubernetes.io/component": "monitoring"}
	podMonitor := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor",
		"metadata": map[string]any{"name": PodMonitorName, "namespace": namespace, "labels": toAny(labels)},
		"spec": map[string]any{
			"namespaceSelector": map[string]any{"any": true},
			"selector":          map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": Job}},
			"jobLabel":          "app.kubernetes.io/name",
			"podMetricsEndpoints": []any{map[string]any{"port": "metrics", "path": "/metrics", "scheme": "https",
				// Every series gets the pod's operator id; the operator's own series, which
				// serve the same id, keep theirs rather than gain an exported_operator_id.
				"honorLabels": true,
				"relabelings": []any{map[string]any{"action": "replace", "targetLabel": IDLabel,
					"sourceLabels": []any{"__meta_kubernetes_pod_label_app_kubernetes_io_instance"}}},
				"tlsConfig": map[string]any{"insecureSkipVerify": true},
				"authorization": map[string]any{"type": "Bearer",
					"credentials": map[string]any{"name": ScraperName + ScraperTokenSuffix, "key": "token"}}}},
		},
	}}
	scraper := &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: metav1.ObjectMeta{Name: ScraperName, Namespace: namespace, Labels: labels}}
	token := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: ScraperName + ScraperTokenSuffix, Namespace: namespace, Labels: labels,
			Annotations: map[string]string{corev1.ServiceAccountNameKey: ScraperName}},
		Type: corev1.SecretTypeServiceAccountToken}
	binding := &rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: ScraperName, Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: install.MetricsReaderRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ScraperName, Namespace: namespace}}}
	rules := make([]any, len(Alerts))
	for i, a := range Alerts {
		r := map[string]any{"alert": a.Name, "expr": a.Expr, "labels": map[string]any{"severity": a.Severity},
			"annotations": map[string]any{"summary": a.Summary, "description": a.Description, "runbook_url": RunbookURL(a.Name)}}
		if a.For != "" {
			r["for"] = a.For
		}
		rules[i] = r
	}
	rule := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
		"metadata": map[string]any{"name": RuleName, "namespace": namespace, "labels": toAny(labels)},
		"spec":     map[string]any{"groups": []any{map[string]any{"name": "caravan", "rules": rules}}},
	}}
	cmLabels := map[string]string{DashboardLabel: "1"}
	for k, v := range labels {
		cmLabels[k] = v
	}
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: DashboardConfigMap, Namespace: namespace, Labels: cmLabels},
		Data:       map[string]string{DashboardKey: string(dashboard)},
	}
	return []client.Object{podMonitor, scraper, token, binding, rule, cm}, nil
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// A Panel is one time-series panel of the dashboard, of one query.
type Panel struct {
	Title  string
	Expr   string
	Legend string
	Unit   string
}

// Panels are the dashboard's panels; every query is filtered by the operator_id variable.
var Panels = []Panel{
	{Title: "Owned resources", Expr: `sum by (operator_id, kind) (caravan_owned_resources{operator_id=~"$operator_id"})`, Legend: "{{operator_id}} {{kind}}"},
	{Title: "Reconciles per second, by result", Expr: `sum by (operator_id, result) (rate(camel_k_reconciliation_duration_seconds_count{operator_id=~"$operator_id"}[5m]))`,
		Legend: "{{operator_id}} {{result}}", Unit: "ops"},
	{Title: "Reconcile time, 95th percentile", Expr: `histogram_quantile(0.95, sum by (operator_id, kind, le) (rate(camel_k_reconciliation_duration_seconds_bucket{operator_id=~"$operator_id"}[5m])))`,
		Legend: "{{operator_id}} {{kind}}", Unit: "s"},
	{Title: "Time to first readiness, median", Expr: `histogram_quantile(0.5, sum by (operator_id, le) (rate(camel_k_integration_first_readiness_seconds_bucket{operator_id=~"$operator_id"}[15m])))`,
		Legend: "{{operator_id}}", Unit: "s"},
	{Title: "Build attempts, by result", Expr: `sum by (operator_id, result) (increase(camel_k_build_duration_seconds_count{operator_id=~"$operator_id"}[15m]))`,
		Legend: "{{operator_id}} {{result}}"},
	{Title: "Orphaned resources", Expr: `sum by (kind, reason) (caravan_orphaned_resources)`, Legend: "{{kind}} {{reason}}"},
	{Title: "Integrations released to another operator", Expr: `sum by (operator_id) (increase(caravan_integration_releases_total{operator_id=~"$operator_id"}[15m]))`,
		Legend: "{{operator_id}}"},
	{Title: "Integrations adopted, after a release or an expiry", Expr: `sum by (operator_id, after) (increase(caravan_integration_adoptions_total{operator_id=~"$operator_id"}[15m]))`,
		Legend: "{{operator_id}} after {{after}}"},
	{Title: "Integrations awaiting release", Expr: `sum by (operator_id) (caravan_integrations_awaiting_release{operator_id=~"$operator_id"})`, Legend: "{{operator_id}}"},
	{Title: "Cached objects", Expr: `sum by (operator_id, kind) (caravan_cached_objects{operator_id=~"$operator_id"})`, Legend: "{{operator_id}} {{kind}}"},
}

// Dashboard is the Grafana dashboard's JSON.
func Dashboard() ([]byte, error) {
	panels := make([]any, len(Panels))
	for i, p := range Panels {
		panel := map[string]any{
			"id": i + 1, "type": "timeseries", "title": p.Title,
			"datasource": map[string]any{"type": "prometheus", "uid": "${datasource}"},
			"gridPos":    map[string]any{"h": 8, "w": 12, "x": (i % 2) * 12, "y": (i / 2) * 8},
			"targets":    []any{map[string]any{"refId": "A", "expr": p.Expr, "legendFormat": p.Legend}},
		}
		if p.Unit != "" {
			panel["fieldConfig"] = map[string]any{"defaults": map[string]any{"unit": p.Unit}, "overrides": []any{}}
		}
		panels[i] = panel
	}
	d := map[string]any{
		"uid": "caravan-operators", "title": "Caravan operators", "schemaVersion": 39, "editable": true,
		"time":   map[string]any{"from": "now-6h", "to": "now"},
		"tags":   []any{"caravan", "camel-k"},
		"panels": panels,
		"templating": map[string]any{"list": []any{
			map[string]any{"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Data source"},
			map[string]any{"name": "operator_id", "type": "query", "label": "Operator", "multi": true, "includeAll": true,
				"allValue": ".*", "refresh": 2, "datasource": map[string]any{"type": "prometheus", "uid": "${datasource}"},
				"query":      map[string]any{"query": "label_values(caravan_owned_resources, operator_id)", "refId": "operator_id"},
				"definition": "label_values(caravan_owned_resources, operator_id)"},
		}},
	}
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding the dashboard: %w", err)
	}
	return append(data, '\n'), nil
}
