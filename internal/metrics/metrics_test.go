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
	"k8s.io/apimachinery/pkg/types"
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
		_, _ = r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "apps", Name: "route"}})
	}
	orphans := m.Instrument("Orphan", reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil }))
	_, _ = orphans.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Name: "camel-k"}})
	bindings := m.Instrument("KameletBinding", reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil }))
	_, _ = bindings.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "apps", Name: "b"}})
	now := time.Now()
	m.ObserveBuild(now, now, now, 1, BuildFailed)
	m.ObserveBuild(now, now, now, 2, BuildSucceeded)
	m.ObserveBuild(now, now, now, 1, BuildError)
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
		"camel_k_reconciliation_duration_seconds": { // labels in the order a scrape gives them
			"group=,kind=Orphan,namespace=,result=Reconciled,tag=,version=",
			"group=camel.apache.org,kind=Integration,namespace=apps,result=Errored,tag=PlatformError,version=v1",
			"group=camel.apache.org,kind=Integration,namespace=apps,result=Errored,tag=UserError,version=v1",
			"group=camel.apache.org,kind=Integration,namespace=apps,result=Reconciled,tag=,version=v1",
			"group=camel.apache.org,kind=Integration,namespace=apps,result=Requeued,tag=,version=v1",
			"group=camel.apache.org,kind=KameletBinding,namespace=apps,result=Reconciled,tag=,version=v1alpha1"},
		"camel_k_build_duration_seconds":  {"result=Error", "result=Failed", "result=Succeeded"},
		"camel_k_build_recovery_attempts": {"result=Error", "result=Failed", "result=Succeeded"},
	}
	for name, labels := range want {
		slices.Sort(got[name])
		if !slices.Equal(got[name], labels) {
			t.Errorf("%s: got %v, want %v", name, got[name], labels)
		}
	}
}

func TestBuildRecoveriesAreAHistogramOfRetriesBeforeEachAttempt(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg, "tenant-a")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	m.ObserveBuild(now, now, now, 1, BuildFailed)
	m.ObserveBuild(now, now, now, 2, BuildFailed)
	m.ObserveBuild(now, now, now, 3, BuildSucceeded)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]float64{}
	counts := map[string]uint64{}
	for _, f := range families {
		if f.GetName() != "camel_k_build_recovery_attempts" {
			continue
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "result" {
					sums[l.GetValue()] = s.GetHistogram().GetSampleSum()
					counts[l.GetValue()] = s.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	if sums[BuildFailed] != 1 || counts[BuildFailed] != 2 || sums[BuildSucceeded] != 2 || counts[BuildSucceeded] != 1 {
		t.Errorf("recoveries: sums %v, counts %v; want Failed 0+1 over 2 attempts, Succeeded 2 over 1", sums, counts)
	}
}
