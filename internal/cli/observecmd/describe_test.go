package observecmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/cli/clitest"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
)

// testEvent is an Event of the operator, as the core API shows one the events.k8s.io API wrote, at
// before the test runs: kubectl's events section tells ages by the clock.
func testEvent(reason, note string, at time.Duration) corev1.Event {
	return corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: reason + "-" + fmt.Sprint(int(at.Seconds()))},
		EventTime:  metav1.NewMicroTime(time.Now().Add(-at)), Reason: reason, Message: note, Type: "Normal",
		ReportingController: "caravan.dev/operator",
	}
}

func integrationReportFixture() *integrationReport {
	it := clitest.SampleIntegrations()[0]
	it.Status.Conditions = append(it.Status.Conditions,
		clitest.Condition("Reconciling", metav1.ConditionTrue, "Progressing", "rolling out\nthe new template", 30*time.Second))
	d := appsv1.Deployment{ObjectMeta: clitest.ObjectMeta("apps", "timer-to-log", "tenant-a", 5*time.Minute)}
	d.Spec.Replicas = ptr.To[int32](2)
	d.Status.ReadyReplicas = 1
	cm := corev1.ConfigMap{ObjectMeta: clitest.ObjectMeta("apps", "timer-to-log-camel", "tenant-a", 5*time.Minute),
		Data: map[string]string{"flow.yaml": "", "application.properties": ""}}
	svc := corev1.Service{ObjectMeta: clitest.ObjectMeta("apps", "timer-to-log", "tenant-a", 5*time.Minute),
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.0.0.12"}}
	series := testEvent("IntegrationPhaseUpdated", `Integration timer-to-log in phase "Deploying": 0/2 pods ready`, 4*time.Minute)
	series.Series = &corev1.EventSeries{Count: 3, LastObservedTime: metav1.NewMicroTime(time.Now().Add(-3 * time.Minute))}
	return &integrationReport{
		it: it, deployments: []appsv1.Deployment{d}, configMaps: []corev1.ConfigMap{cm}, services: []corev1.Service{svc},
		events: recentEvents(&corev1.EventList{Items: []corev1.Event{
			testEvent("IntegrationPhaseUpdated", `Integration timer-to-log in phase "Running"`, 2*time.Minute),
			testEvent("IntegrationPhaseUpdated", `Integration timer-to-log in phase "Initialization"`, 5*time.Minute),
			series,
		}}, maxEvents),
	}
}

func TestDescribeReports(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "",
		errors.New(`User "dev" cannot list resource "events"`))

	bare := &integrationReport{it: clitest.SampleIntegrations()[2]}
	noEvents := integrationReportFixture()
	noEvents.events, noEvents.eventsErr = nil, forbidden
	// Assigned to tenant-b, released by tenant-a, not adopted yet; and
	// assigned to tenant-b, not released yet.
	released, waiting := integrationReportFixture(), integrationReportFixture()
	for _, r := range []*integrationReport{released, waiting} {
		r.it = r.it.DeepCopy()
		r.it.Annotations[camelv1.OperatorIDAnnotation] = "tenant-b"
		r.it.Status.Ownership = camelv1.Ownership{Owner: "tenant-a", Epoch: 3}
	}
	released.it.Status.Ownership.ReleasedAt = ptr.To(clitest.Ago(20 * time.Second))

	pipe := &camelv1.Pipe{ObjectMeta: clitest.ObjectMeta("apps", "timer-to-http", "tenant-a", 10*time.Minute)}
	pipe.Spec.Source = camelv1.Endpoint{Ref: &corev1.ObjectReference{Kind: "Kamelet", Name: "timer-source"}}
	pipe.Spec.Steps = []camelv1.Endpoint{{Ref: &corev1.ObjectReference{Kind: "Kamelet", Name: "insert-header-action"}}}
	pipe.Spec.Sink = camelv1.Endpoint{URI: ptr.To("http://example.com/ingest")}
	pipe.Status = camelv1.PipeStatus{Phase: camelv1.PipePhaseReady, Replicas: ptr.To[int32](1)}
	made := &camelv1.Integration{ObjectMeta: clitest.ObjectMeta("apps", "timer-to-http", "tenant-a", 10*time.Minute)}
	made.Status.Phase = camelv1.IntegrationPhaseRunning

	kit := &camelv1.IntegrationKit{ObjectMeta: clitest.ObjectMeta("apps", "kit-abc", "tenant-a", 2*time.Hour)}
	kit.Labels[camelv1.IntegrationKitTypeLabel] = camelv1.IntegrationKitTypePlatform
	kit.Spec.Dependencies = []string{"camel:timer", "camel:log"}
	kit.Status = camelv1.IntegrationKitStatus{Phase: camelv1.IntegrationKitPhaseError, BaseImage: "eclipse-temurin:21",
		Failure: &camelv1.Failure{Reason: "pushing the image: 401 Unauthorized", Time: clitest.Ago(time.Hour),
			Recovery: camelv1.FailureRecovery{Attempt: 5, AttemptMax: 5}}}

	platform := &camelv1.IntegrationPlatform{ObjectMeta: clitest.ObjectMeta("ops-a", "tenant-a", "tenant-a", 50*time.Hour)}
	platform.Spec.Build.Registry.Address = "registry.local:5000"
	platform.Status.Phase = camelv1.IntegrationPlatformPhaseReady
	platform.Status.Version = "v0.3.0"
	platform.Status.Build.BaseImage = "eclipse-temurin:21"

	iops := clitest.SampleOperators()
	live, stale := iops[1], iops[2]
	live.Spec.WatchNamespaces = []string{"apps", "web"}
	registered := camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: "pre-created", CreationTimestamp: clitest.Ago(time.Minute)}}

	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"integration", func(b *bytes.Buffer) error {
			return writeIntegrationReport(b, integrationReportFixture(), clitest.Now)
		}},
		{"integration-without-status", func(b *bytes.Buffer) error { return writeIntegrationReport(b, bare, clitest.Now) }},
		{"integration-events-forbidden", func(b *bytes.Buffer) error { return writeIntegrationReport(b, noEvents, clitest.Now) }},
		{"integration-moving-released", func(b *bytes.Buffer) error { return writeIntegrationReport(b, released, clitest.Now) }},
		{"integration-moving-waiting", func(b *bytes.Buffer) error { return writeIntegrationReport(b, waiting, clitest.Now) }},
		{"pipe", func(b *bytes.Buffer) error {
			return writePipeReport(b, &pipeReport{pipe: pipe, integration: made}, clitest.Now)
		}},
		{"kit", func(b *bytes.Buffer) error { return writeKitReport(b, &kitReport{kit: kit}, clitest.Now) }},
		{"platform", func(b *bytes.Buffer) error {
			return writePlatformReport(b, &platformReport{platform: platform}, clitest.Now)
		}},
		{"operator-live", func(b *bytes.Buffer) error {
			return writeOperatorReport(b, &operatorReport{iop: &live, owned: 12,
				events: &corev1.EventList{Items: []corev1.Event{testEvent("StaleRegistrationTakenOver", "taken over by the operator in namespace ops-b", time.Hour)}}}, clitest.Now)
		}},
		{"operator-stale", func(b *bytes.Buffer) error {
			return writeOperatorReport(b, &operatorReport{iop: &stale, owned: 1}, clitest.Now)
		}},
		{"operator-never-renewed-count-forbidden", func(b *bytes.Buffer) error {
			return writeOperatorReport(b, &operatorReport{iop: &registered, ownedErr: apierrors.NewForbidden(
				schema.GroupResource{Group: "camel.apache.org", Resource: "integrations"}, "", errors.New("no access"))}, clitest.Now)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := tc.write(&out); err != nil {
				t.Fatal(err)
			}
			clitest.AssertGolden(t, "describe/"+tc.name+".golden", out.String())
		})
	}
}

func TestRecentEventsAreOldestFirstAndBounded(t *testing.T) {
	events := &corev1.EventList{}
	for i := range 15 {
		events.Items = append(events.Items, testEvent(fmt.Sprintf("R%02d", i), "", time.Duration(i)*time.Minute))
	}
	got := recentEvents(events, maxEvents)
	if len(got.Items) != maxEvents {
		t.Fatalf("got %d events", len(got.Items))
	}
	var reasons []string
	for _, e := range got.Items {
		reasons = append(reasons, e.Reason)
	}
	if want := "R09,R08,R07,R06,R05,R04,R03,R02,R01,R00"; strings.Join(reasons, ",") != want {
		t.Fatalf("got %v, want the 10 newest, newest last: %s", reasons, want)
	}
}

func TestMadeFromPipe(t *testing.T) {
	p := &camelv1.Pipe{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "pipe-uid"}}
	owned := &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Name: "p", OwnerReferences: []metav1.OwnerReference{
		{Kind: "Pipe", Name: "p", UID: "pipe-uid", Controller: ptr.To(true)}}}}
	labelled := &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{
		camelv1.CreatedByKindLabel: "Pipe", camelv1.CreatedByNameLabel: "p"}}}
	unrelated := &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	if !madeFromPipe(owned, p) || !madeFromPipe(labelled, p) || madeFromPipe(unrelated, p) {
		t.Fatal("an Integration is made from a Pipe when the Pipe controls it or its created-by labels name it, only then")
	}
}

func TestLookupDescribeType(t *testing.T) {
	for name, want := range map[string]string{"it": "integration", "Integrations": "integration", "pp": "pipe",
		"ik": "kit", "itp": "platform", "iop": "operator", "operators": "operator", "klb": "kameletbinding", "kamelets": "kamelet", "ikb": "build"} {
		dt, err := lookupDescribeType(name)
		if err != nil || dt.name != want {
			t.Errorf("%s: got %q, %v; want %s", name, dt.name, err, want)
		}
	}
	if _, err := lookupDescribeType("deployment"); err == nil || !strings.Contains(err.Error(), "use one of integration, pipe, kameletbinding, kamelet, build, kit, platform, operator") {
		t.Fatalf("got %v", err)
	}
}

func TestDescribeKameletBindingsKameletsAndBuilds(t *testing.T) {
	ns := clitest.Cluster(t).Namespace(t)
	klb := &camelv1alpha1.KameletBinding{ObjectMeta: clitest.ObjectMeta(ns, "old-style", "tenant-a", time.Minute)}
	klb.Spec.Source = camelv1.Endpoint{Ref: &corev1.ObjectReference{Kind: "Kamelet", Name: "timer-source"}}
	klb.Spec.Sink = camelv1.Endpoint{URI: ptr.To("log:out")}
	kamelet := &camelv1.Kamelet{ObjectMeta: clitest.ObjectMeta(ns, "greeter-source", "tenant-a", time.Minute)}
	kamelet.Labels[camelv1.KameletTypeLabel] = "source"
	kamelet.Spec.Dependencies = []string{"camel:timer"}
	b := &camelv1.Build{ObjectMeta: clitest.ObjectMeta(ns, "kit-abc", "tenant-a", time.Minute)}
	for _, o := range []client.Object{klb, kamelet, b} {
		o.SetCreationTimestamp(metav1.Time{})
		o.SetResourceVersion("")
	}
	clitest.Create(t, klb, kamelet, b)
	for _, tc := range []struct {
		kind, name string
		want       []string
	}{
		{"klb", "old-style", []string{"Name:", "old-style", "Source:", "Kamelet timer-source", "Sink:", "log:out", "Operator:", "tenant-a"}},
		{"kamelet", "greeter-source", []string{"greeter-source", "Type:", "source", "Dependencies:", "camel:timer"}},
		{"build", "kit-abc", []string{"kit-abc", "Jars:", "Phase:"}},
	} {
		dt, err := lookupDescribeType(tc.kind)
		if err != nil {
			t.Fatal(err)
		}
		streams, _, out, _ := genericiooptions.NewTestIOStreams()
		o := &DescribeOptions{kind: dt, name: tc.name, Cluster: cmdutil.Cluster{Namespace: ns, Client: clitest.Cluster(t).Client}, now: time.Now, IOStreams: streams}
		if err := o.Run(context.Background()); err != nil {
			t.Fatalf("describe %s %s: %v", tc.kind, tc.name, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("describe %s %s lacks %q:\n%s", tc.kind, tc.name, w, out)
			}
		}
	}
}
