package metrics

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestHandoverMetricsCountReleasesAdoptionsAndWhatWaits(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewRegistry()
	m, err := New(reg, "tenant-a")
	g.Expect(err).NotTo(HaveOccurred())

	g.Expect(testutil.ToFloat64(m.adoptions.WithLabelValues(AfterExpiry))).To(BeZero())
	m.SetAwaitingRelease(2)
	g.Expect(testutil.ToFloat64(m.awaitingRelease)).To(Equal(2.0))

	m.Adopted(AfterRelease)
	m.Adopted(AfterRelease)
	m.Adopted(AfterExpiry)
	m.Released()
	g.Expect(testutil.ToFloat64(m.adoptions.WithLabelValues(AfterRelease))).To(Equal(2.0))
	g.Expect(testutil.ToFloat64(m.adoptions.WithLabelValues(AfterExpiry))).To(Equal(1.0))
	g.Expect(testutil.ToFloat64(m.releases)).To(Equal(1.0))

	n, err := testutil.GatherAndCount(reg, "caravan_integration_adoptions_total", "caravan_integrations_awaiting_release",
		"caravan_integration_releases_total")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n).To(Equal(4), "two adoption series, the gauge and the release counter")
}

func TestEveryMetricIsInTheOperationsReference(t *testing.T) {
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	names, err := Names()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if !strings.Contains(string(doc), "| `"+name+"` |") {
			t.Errorf("docs/operations.md does not describe the metric %s", name)
		}
	}
	if len(names) < 12 {
		t.Errorf("only %d metrics described: the collectors were not all read", len(names))
	}
}

func TestReconcilesAndBuildsAreLabelledAsCamelKLabelsThem(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg, "tenant-a")
	if err != nil {
		t.Fatal(err)
	}
	outcomes := []struct {
		res reconcile.Result
		err error
	}{
		{reconcile.Result{}, nil},
		{reconcile.Result{RequeueAfter: time.Second}, nil},
		{reconcile.Result{}, errors.New("the API server is down")},
		{reconcile.Result{}, reconcile.TerminalError(errors.New("bad input"))},
	}
	for _, o := range outcomes {
		r := m.Instrument("Integration", reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return o.res, o.err }))
		_, _ = r.Reconcile(context.Background(), reconcile.Request{})
	}
	now := time.Now()
	m.ObserveBuild(now, now, now, 1, false)
	m.ObserveBuild(now, now, now, 2, true)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, f := range families {
		for _, s := range f.GetMetric() {
			var pairs []string
			for _, l := range s.GetLabel() {
				if l.GetName() != "operator_id" {
					pairs = append(pairs, l.GetName()+"="+l.GetValue())
				}
			}
			got[f.GetName()] = append(got[f.GetName()], strings.Join(pairs, ","))
		}
	}
	want := map[string][]string{
		"camel_k_reconciliation_duration_seconds": {
			"kind=Integration,result=Errored,tag=PlatformError", "kind=Integration,result=Errored,tag=UserError",
			"kind=Integration,result=Reconciled,tag=", "kind=Integration,result=Requeued,tag="},
		"camel_k_build_duration_seconds": {"result=Error", "result=Succeeded"},
	}
	for name, labels := range want {
		slices.Sort(got[name])
		if !slices.Equal(got[name], labels) {
			t.Errorf("%s: got %v, want %v", name, got[name], labels)
		}
	}
}
