package observecmd

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/cli/clitest"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/internal/scheme"
)

func mustResource(t *testing.T, name string) resourceType {
	t.Helper()
	rt, err := lookupResource(name)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func operatorsByID(iops []camelv1alpha1.IntegrationOperator) map[string]*camelv1alpha1.IntegrationOperator {
	m := map[string]*camelv1alpha1.IntegrationOperator{}
	for i := range iops {
		m[iops[i].Name] = &iops[i]
	}
	return m
}

func TestGetTables(t *testing.T) {
	its := clitest.Objects(clitest.SampleIntegrations()...)
	sortObjects(its)
	inApps := its[:3]
	orphans := clitest.Objects(clitest.SampleIntegrations()[3:]...)
	sortObjects(orphans)

	pipe := &camelv1.Pipe{ObjectMeta: clitest.ObjectMeta("apps", "timer-to-http", "tenant-a", 10*time.Minute)}
	pipe.Status = camelv1.PipeStatus{Phase: camelv1.PipePhaseReady, Replicas: ptr.To[int32](1)}
	pipe.Status.Conditions = []metav1.Condition{clitest.Condition(camelv1.ConditionReady, metav1.ConditionTrue, "IntegrationReady", "", time.Minute)}
	newPipe := &camelv1.Pipe{ObjectMeta: clitest.ObjectMeta("apps", "new-pipe", "", 5*time.Second)}

	builtKit := &camelv1.IntegrationKit{ObjectMeta: clitest.ObjectMeta("apps", "kit-abc", "tenant-a", 2*time.Hour)}
	builtKit.Labels[camelv1.IntegrationKitTypeLabel] = camelv1.IntegrationKitTypePlatform
	builtKit.Status = camelv1.IntegrationKitStatus{Phase: camelv1.IntegrationKitPhaseReady, Image: "registry.local/kits/kit-abc@sha256:0123"}
	externalKit := &camelv1.IntegrationKit{ObjectMeta: clitest.ObjectMeta("apps", "kit-ext", "tenant-b", 30*time.Minute)}
	externalKit.Labels[camelv1.IntegrationKitTypeLabel] = camelv1.IntegrationKitTypeExternal
	externalKit.Spec.Image = "example/camel-app:1.0"

	build := &camelv1.Build{ObjectMeta: clitest.ObjectMeta("apps", "kit-abc-1", "tenant-a", 2*time.Hour)}
	build.Status.Phase = camelv1.BuildPhaseSucceeded
	pending := &camelv1.Build{ObjectMeta: clitest.ObjectMeta("apps", "kit-def-1", "tenant-b", 90*time.Second)}
	pending.Status.Phase = camelv1.BuildPhasePending

	platform := &camelv1.IntegrationPlatform{ObjectMeta: clitest.ObjectMeta("ops-a", "tenant-a", "tenant-a", 50*time.Hour)}
	platform.Status.Phase = camelv1.IntegrationPlatformPhaseReady

	for _, tc := range []struct {
		name     string
		resource string
		objs     []client.Object
		opts     tableOptions
	}{
		{name: "integrations", resource: "it", objs: inApps},
		{name: "integrations-all-namespaces", resource: "integrations", objs: its, opts: tableOptions{allNamespaces: true}},
		{name: "integrations-wide", resource: "integration", objs: inApps, opts: tableOptions{wide: true}},
		{name: "integrations-wide-all-namespaces", resource: "it", objs: its, opts: tableOptions{wide: true, allNamespaces: true}},
		{name: "integrations-orphaned", resource: "it", objs: orphans, opts: tableOptions{allNamespaces: true, orphaned: true,
			reasons: orphanReasons(orphans, operatorsByID(clitest.SampleOperators()), clitest.Now)}},
		{name: "pipes", resource: "pp", objs: clitest.Objects(newPipe, pipe)},
		{name: "kits", resource: "ik", objs: clitest.Objects(builtKit, externalKit)},
		{name: "builds", resource: "ikb", objs: clitest.Objects(build, pending)},
		{name: "platforms", resource: "itp", objs: clitest.Objects(platform), opts: tableOptions{allNamespaces: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.now = clitest.Now
			var out bytes.Buffer
			if err := writeTable(&out, mustResource(t, tc.resource), tc.objs, tc.opts, scheme.New()); err != nil {
				t.Fatal(err)
			}
			clitest.AssertGolden(t, "get/"+tc.name+".golden", out.String())
		})
	}
}

func TestOrphanReason(t *testing.T) {
	operators := operatorsByID(clitest.SampleOperators())
	neverBeat := &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: "never"}}
	slow := &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: "slow"}}
	slow.Status.HeartbeatTime = ptr.To(clitest.Ago(20 * time.Second))
	limited := &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: "limited"},
		Spec: camelv1alpha1.IntegrationOperatorSpec{WatchNamespaces: []string{"team-a"}}}
	limited.Status.HeartbeatTime = ptr.To(clitest.Ago(time.Second))
	operators["never"], operators["slow"], operators["limited"] = neverBeat, slow, limited
	for _, tc := range []struct {
		name string
		id   string
		ns   string
		want string
	}{
		{name: "a resource that names no operator is unassigned, not an orphan", id: "", want: ""},
		{name: "a resource for a live operator is not an orphan", id: "tenant-a", want: ""},
		{name: "a resource for an id without an IntegrationOperator is an orphan", id: "gone", want: ownership.ReasonNotRegistered},
		{name: "a resource for an operator whose heartbeat is older than its staleAfterSeconds is an orphan", id: "tenant-c", want: ownership.ReasonHeartbeatStale},
		{name: "a resource for an operator that never renewed its registration is an orphan", id: "never", want: ownership.ReasonHeartbeatStale},
		{name: "a registration without staleAfterSeconds stays live for the default 30s", id: "slow", want: ""},
		{name: "a resource of a namespace its live operator does not serve is an orphan", id: "limited", want: ownership.ReasonNotServingNamespace},
		{name: "a resource of a namespace its live operator serves is not an orphan", id: "limited", ns: "team-a", want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := tc.ns
			if ns == "" {
				ns = "apps"
			}
			if got := orphanReason(tc.id, ns, operators, clitest.Now); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLookupResourceAcceptsCamelKNames(t *testing.T) {
	for name, want := range map[string]string{
		"it": "integrations", "Integration": "integrations", "integrations.camel.apache.org": "integrations",
		"pp": "pipes", "pipe": "pipes", "ik": "integrationkits", "kits": "integrationkits", "kit": "integrationkits",
		"ikb": "builds", "build": "builds", "itp": "integrationplatforms", "platforms": "integrationplatforms",
		"klb": "kameletbindings", "kameletbindings.camel.apache.org": "kameletbindings", "kamelet": "kamelets",
	} {
		rt, err := lookupResource(name)
		if err != nil || rt.plural != want {
			t.Errorf("%s: got %q, %v; want %s", name, rt.plural, err, want)
		}
	}
	_, err := lookupResource("deployments")
	if err == nil || !strings.Contains(err.Error(), `unknown resource type "deployments": use one of integrations (integration, it)`) {
		t.Fatalf("got %v", err)
	}
}

func TestGetValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    GetOptions
		want string
	}{
		{name: "--operator and --unassigned exclude each other", o: GetOptions{OperatorID: "a", Unassigned: true}, want: "exclude each other"},
		{name: "--unassigned and --orphaned exclude each other", o: GetOptions{Unassigned: true, Orphaned: true}, want: "exclude each other"},
		{name: "an invalid operator id is refused", o: GetOptions{OperatorID: "Tenant_A"}, want: `-x/--operator-id: invalid operator id "Tenant_A"`},
		{name: "names cannot be combined with -A", o: GetOptions{AllNamespaces: true, names: []string{"x"}}, want: "across all namespaces"},
		{name: "an unknown output format is refused", o: GetOptions{Output: "custom-columns"}, want: `unsupported output format "custom-columns"`},
		{name: "a template form without a template is refused", o: GetOptions{Output: "jsonpath="}, want: "-o jsonpath= needs a template"},
		{name: "a malformed template is refused", o: GetOptions{Output: "jsonpath={.items[*"}, want: "-o jsonpath:"},
		{name: "a watch of names is refused", o: GetOptions{Watch: true, names: []string{"x"}}, want: "-w/--watch follows a list"},
		{name: "a selector with names is refused", o: GetOptions{Selector: "a=b", names: []string{"x"}}, want: "-l/--selector selects from a list"},
		{name: "one filter is fine", o: GetOptions{Orphaned: true, AllNamespaces: true, Output: "wide"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// getFixture is the test integrations and operators on the API server,
// those of the namespace "apps" in apps, those of "other" in other.
type getFixture struct {
	apps, other string
}

func newGetFixture(t *testing.T) getFixture {
	t.Helper()
	f := getFixture{apps: clitest.Cluster(t).Namespace(t), other: clitest.Cluster(t).Namespace(t)}
	for _, it := range clitest.SampleIntegrations() {
		it.Namespace = map[string]string{"apps": f.apps, "other": f.other}[it.Namespace]
		clitest.Create(t, it)
	}
	for _, iop := range clitest.SampleOperators() {
		clitest.Create(t, &iop)
	}
	return f
}

// get runs `caravan get resource` with o, in the namespace apps unless o
// names one.
func (f getFixture) get(t *testing.T, o GetOptions, resource string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	o.IOStreams = genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}
	o.Cluster.Watch, o.scheme, o.now = clitest.WatchClient(t), clitest.Cluster(t).Client.Scheme(), func() time.Time { return clitest.Now }
	sel, err := labels.Parse(o.Selector)
	if err != nil {
		t.Fatal(err)
	}
	o.selector = sel
	o.resource = mustResource(t, resource)
	if o.Namespace == "" {
		o.Namespace = f.apps
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	err = o.Run(context.Background())
	return out.String(), errOut.String(), err
}

func TestGetRunFilters(t *testing.T) {
	f := newGetFixture(t)
	for _, tc := range []struct {
		name string
		o    GetOptions
		want []string
	}{
		{name: "without a filter, the namespace's integrations", want: []string{"building", "fresh", "timer-to-log"}},
		{name: "--operator selects by label", o: GetOptions{OperatorID: "tenant-a", AllNamespaces: true}, want: []string{"timer-to-log"}},
		{name: "--unassigned keeps those without the annotation", o: GetOptions{Unassigned: true, AllNamespaces: true}, want: []string{"fresh"}},
		{name: "--orphaned keeps unregistered and stale ids", o: GetOptions{Orphaned: true, AllNamespaces: true}, want: []string{"left-behind", "lost"}},
		{name: "-l selects by label on the server", o: GetOptions{Selector: "camel.apache.org/operator.id in (tenant-a,tenant-b)"},
			want: []string{"building", "timer-to-log"}},
		{name: "-l and -x together", o: GetOptions{Selector: "camel.apache.org/operator.id", OperatorID: "tenant-b"}, want: []string{"building"}},
		{name: "names are got one by one", o: GetOptions{names: []string{"timer-to-log", "fresh"}}, want: []string{"fresh", "timer-to-log"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := f.get(t, tc.o, "it")
			if err != nil || errOut != "" {
				t.Fatalf("error %v, stderr %q", err, errOut)
			}
			got := clitest.Names(t, out)
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("got %v, want %v\n%s", got, tc.want, out)
			}
		})
	}
}

// TestGetRunOrphanedShowsTheReason checks the rows, with their REASON,
// that `caravan get --orphaned -A` prints for the orphans. The table
// itself, ages included, is TestGetTables' integrations-orphaned: the API
// server sets the creation times, so the ages here are not fixed.
func TestGetRunOrphanedShowsTheReason(t *testing.T) {
	f := newGetFixture(t)
	out, _, err := f.get(t, GetOptions{Orphaned: true, AllNamespaces: true}, "it")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, row := range clitest.Rows(t, out) {
		got = append(got, strings.Join([]string{row["NAMESPACE"], row["NAME"], row["PHASE"], row["OPERATOR"], row["REASON"]}, " "))
	}
	want := []string{
		f.other + " left-behind Running tenant-c " + ownership.ReasonHeartbeatStale,
		f.other + " lost  gone " + ownership.ReasonNotRegistered, // no phase: an empty cell, as kubectl prints it
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got rows\n%s\nwant\n%s\nfrom\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), out)
	}
}

func TestGetRunSaysWhenNothingIsFound(t *testing.T) {
	f := newGetFixture(t)
	empty := clitest.Cluster(t).Namespace(t)
	out, errOut, err := f.get(t, GetOptions{Cluster: cmdutil.Cluster{Namespace: empty}}, "it")
	if err != nil || out != "" || errOut != "No resources found in "+empty+" namespace.\n" {
		t.Fatalf("got %q, %q, %v", out, errOut, err)
	}
	out, errOut, err = f.get(t, GetOptions{Unassigned: true, AllNamespaces: true}, "pipes")
	if err != nil || out != "" || errOut != "No resources found\n" {
		t.Fatalf("got %q, %q, %v", out, errOut, err)
	}
	out, errOut, err = f.get(t, GetOptions{Cluster: cmdutil.Cluster{Namespace: empty}, Output: "yaml"}, "it")
	if err != nil || errOut != "" || !strings.Contains(out, "kind: List") {
		t.Fatalf("an empty YAML list is expected, got %q, %q, %v", out, errOut, err)
	}
}

func TestGetRunReportsMissingNamesAfterTheFoundOnes(t *testing.T) {
	f := newGetFixture(t)
	out, _, err := f.get(t, GetOptions{names: []string{"timer-to-log", "missing"}}, "it")
	if err == nil || !strings.Contains(err.Error(), `integrations.camel.apache.org "missing" not found`) {
		t.Fatalf("got %v", err)
	}
	if got := clitest.Names(t, out); len(got) != 1 || got[0] != "timer-to-log" {
		t.Fatalf("got %v", got)
	}
	out, errOut, err := f.get(t, GetOptions{names: []string{"missing"}}, "it")
	if err == nil || out != "" || errOut != "" {
		t.Fatalf("got %q, %q, %v", out, errOut, err)
	}
}

func TestGetPrintsKubectlsTemplateForms(t *testing.T) {
	f := newGetFixture(t)
	for format, want := range map[string]string{
		"jsonpath={.items[*].metadata.name}":                        "building fresh timer-to-log",
		"go-template={{range .items}}{{.metadata.name}} {{end}}":    "building fresh timer-to-log ",
		"custom-columns=NAME:.metadata.name,PHASE:.status.phase":    "NAME           PHASE\nbuilding       Building Kit\nfresh          <none>\ntimer-to-log   Running\n",
		"jsonpath={.items[*].metadata.annotations.no\\.such\\.key}": "",
	} {
		out, errOut, err := f.get(t, GetOptions{Output: format}, "it")
		if err != nil || errOut != "" || out != want {
			t.Errorf("-o %s: got %q (%v, %q), want %q", format, out, err, errOut, want)
		}
	}
}

func TestGetWatchPrintsEachChangeUnderTheTable(t *testing.T) {
	f := newGetFixture(t)
	var out, errOut syncBuffer
	o := GetOptions{Watch: true, Cluster: cmdutil.Cluster{Namespace: f.apps}, selector: labels.Everything(),
		IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}}
	o.Cluster.Watch, o.scheme, o.now = clitest.WatchClient(t), clitest.Cluster(t).Client.Scheme(), func() time.Time { return clitest.Now }
	o.resource = mustResource(t, "it")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()
	g := NewWithT(t)
	g.Eventually(out.String, 10*time.Second, 50*time.Millisecond).Should(ContainSubstring("timer-to-log"))
	it := &camelv1.Integration{}
	g.Expect(clitest.Cluster(t).Client.Get(ctx, client.ObjectKey{Namespace: f.apps, Name: "fresh"}, it)).To(Succeed())
	it.Status.Phase = camelv1.IntegrationPhaseBuildComplete
	g.Expect(clitest.Cluster(t).Client.Status().Update(ctx, it)).To(Succeed())
	g.Eventually(out.String, 10*time.Second, 50*time.Millisecond).Should(MatchRegexp(`(?m)^fresh\s+Build Complete\s`))
	cancel()
	g.Eventually(done, 10*time.Second).Should(Receive(BeNil()))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	g.Expect(lines[0]).To(HavePrefix("NAME"), "one header, then the rows")
	g.Expect(strings.Count(out.String(), "NAME ")).To(Equal(1))
}

// syncBuffer is a buffer a command writes to while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestGetListsKameletBindingsAndKamelets(t *testing.T) {
	f := getFixture{apps: clitest.Cluster(t).Namespace(t)}
	klb := &camelv1alpha1.KameletBinding{ObjectMeta: metav1.ObjectMeta{Namespace: f.apps, Name: "old-style",
		Annotations: map[string]string{camelv1.OperatorIDAnnotation: "tenant-a"}}}
	klb.Spec.Source = camelv1.Endpoint{URI: ptr.To("timer:x")}
	klb.Spec.Sink = camelv1.Endpoint{URI: ptr.To("log:out")}
	kamelet := &camelv1.Kamelet{ObjectMeta: metav1.ObjectMeta{Namespace: f.apps, Name: "greeter-source"}}
	clitest.Create(t, klb, kamelet)
	for resource, want := range map[string]string{"klb": "old-style", "kamelets": "greeter-source"} {
		out, errOut, err := f.get(t, GetOptions{}, resource)
		if err != nil || errOut != "" {
			t.Fatalf("get %s: %v, %q", resource, err, errOut)
		}
		if got := clitest.Names(t, out); len(got) != 1 || got[0] != want {
			t.Errorf("get %s: got %v, want %s\n%s", resource, got, want, out)
		}
	}
	out, _, err := f.get(t, GetOptions{}, "klb")
	if err != nil || !strings.Contains(out, "tenant-a") {
		t.Errorf("the binding's operator is not shown (%v):\n%s", err, out)
	}
}

func TestGetTakesKubectlsTableFlags(t *testing.T) {
	f := newGetFixture(t)
	out, _, err := f.get(t, GetOptions{NoHeaders: true}, "it")
	if err != nil || strings.Contains(out, "NAME") || strings.Count(out, "\n") != 3 {
		t.Errorf("--no-headers: %v\n%s", err, out)
	}
	out, _, err = f.get(t, GetOptions{LabelColumns: []string{camelv1.OperatorIDLabel}, ShowLabels: true}, "it")
	if err != nil || !strings.Contains(strings.SplitN(out, "\n", 2)[0], "OPERATOR.ID") || !strings.Contains(out, "LABELS") ||
		!strings.Contains(out, camelv1.OperatorIDLabel+"=tenant-a") {
		t.Errorf("-L and --show-labels: %v\n%s", err, out)
	}
	out, _, err = f.get(t, GetOptions{SortBy: "{.metadata.name}"}, "it")
	if got := clitest.Names(t, out); err != nil || strings.Join(got, ",") != "building,fresh,timer-to-log" {
		t.Errorf("--sort-by name: %v %v", got, err)
	}
	out, _, err = f.get(t, GetOptions{SortBy: ".metadata.annotations.nosuch"}, "it")
	if err == nil || !strings.Contains(err.Error(), "--sort-by .metadata.annotations.nosuch") {
		t.Errorf("--sort-by of a field no object has: %v\n%s", err, out)
	}
	out, _, err = f.get(t, GetOptions{FieldSelector: "metadata.name=fresh"}, "it")
	if got := clitest.Names(t, out); err != nil || strings.Join(got, ",") != "fresh" {
		t.Errorf("--field-selector: %v %v", got, err)
	}
}
