package monitoring_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/monitoring"
	"github.com/caravan-dev/caravan/internal/monitoring/ruletest"
)

var metricName = regexp.MustCompile(`\b((?:camel_k|caravan)_[a-z_]+?)(?:_bucket|_count|_sum)?\b`)

// TestTheAlertsAndTheDashboardQueryMetricsTheOperatorsServe fails when a rule or a panel
// names a metric no operator serves, or filters on a label it does not carry.
func TestTheAlertsAndTheDashboardQueryMetricsTheOperatorsServe(t *testing.T) {
	served := servedLabels(t)
	exprs := map[string]string{}
	for _, a := range monitoring.Alerts {
		exprs["alert "+a.Name] = a.Expr
	}
	for _, p := range monitoring.Panels {
		exprs["panel "+p.Title] = p.Expr
		if !strings.Contains(p.Expr, `operator_id=~"$operator_id"`) && !strings.Contains(p.Expr, "caravan_orphaned_resources") {
			t.Errorf("panel %q ignores the operator_id variable", p.Title)
		}
	}
	for what, expr := range exprs {
		parsed, err := ruletest.PromQL.ParseExpr(expr)
		if err != nil {
			t.Errorf("%s does not parse: %v", what, err)
			continue
		}
		var selectors []*parser.VectorSelector
		parser.Inspect(parsed, func(n parser.Node, _ []parser.Node) error {
			if vs, ok := n.(*parser.VectorSelector); ok {
				selectors = append(selectors, vs)
			}
			return nil
		})
		if len(selectors) == 0 {
			t.Errorf("%s queries no metric: %s", what, expr)
		}
		for _, vs := range selectors {
			name := servedName(vs.Name, served)
			carried, ok := served[name]
			if !ok {
				t.Errorf("%s queries %s, which no operator serves", what, vs.Name)
				continue
			}
			for _, m := range vs.LabelMatchers {
				if m.Name != labels.MetricName && !slices.Contains(carried, m.Name) && !slices.Contains(targetLabels, m.Name) &&
					!(m.Name == "le" && strings.HasSuffix(vs.Name, "_bucket")) {
					t.Errorf("%s filters %s on label %s, which it does not carry", what, vs.Name, m.Name)
				}
			}
		}
	}
}

// TestEveryRecommendedAlertIsARule holds the rules to docs/operations.md: each metric its
// alert advice names is queried by a rule.
func TestEveryRecommendedAlertIsARule(t *testing.T) {
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, advice, ok := strings.Cut(string(doc), "Worth an alert:")
	if !ok {
		t.Fatal("docs/operations.md gives no alert advice")
	}
	advice, _, _ = strings.Cut(advice, "\n\n")
	var rules strings.Builder
	for _, a := range monitoring.Alerts {
		rules.WriteString(a.Expr + "\n")
	}
	for _, m := range metricName.FindAllStringSubmatch(advice, -1) {
		if !strings.Contains(rules.String(), m[1]) {
			t.Errorf("docs/operations.md recommends an alert on %s, which no rule queries", m[1])
		}
	}
}

func TestTheObjectsAreAPodMonitorARuleAndADashboardWithTheOperatorVariable(t *testing.T) {
	objs, err := monitoring.Objects("ops")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetObjectKind().GroupVersionKind().Kind)
		if kind := o.GetObjectKind().GroupVersionKind().Kind; o.GetNamespace() != "ops" && kind != "ClusterRoleBinding" {
			t.Errorf("%s %s is in namespace %q", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), o.GetNamespace())
		}
	}
	if !slices.Equal(kinds, []string{"PodMonitor", "ServiceAccount", "Secret", "ClusterRoleBinding", "PrometheusRule", "ConfigMap"}) {
		t.Fatalf("kinds %v", kinds)
	}
	t.Log("the PodMonitor scrapes over HTTPS with the token of the scraper, which the metrics reader role binds")
	endpoint, _, _ := unstructured.NestedSlice(objs[0].(*unstructured.Unstructured).Object, "spec", "podMetricsEndpoints")
	ep := endpoint[0].(map[string]any)
	secret, _, _ := unstructured.NestedString(ep, "authorization", "credentials", "name")
	if ep["scheme"] != "https" || secret != objs[2].GetName() || objs[2].(*corev1.Secret).Annotations[corev1.ServiceAccountNameKey] != objs[1].GetName() {
		t.Errorf("the PodMonitor's endpoint %v does not send the token of Secret %s of ServiceAccount %s", ep, objs[2].GetName(), objs[1].GetName())
	}
	if b := objs[3].(*rbacv1.ClusterRoleBinding); b.RoleRef.Name != install.MetricsReaderRole ||
		b.Subjects[0].Name != objs[1].GetName() || b.Subjects[0].Namespace != "ops" {
		t.Errorf("the binding %+v does not let the scraper read the metrics", b)
	}
	data, err := monitoring.Dashboard()
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Templating struct {
			List []struct{ Name string } `json:"list"`
		} `json:"templating"`
		Panels []any `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	var vars []string
	for _, v := range d.Templating.List {
		vars = append(vars, v.Name)
	}
	if !slices.Contains(vars, "operator_id") || len(d.Panels) != len(monitoring.Panels) {
		t.Fatalf("variables %v, %d panels", vars, len(d.Panels))
	}
}
