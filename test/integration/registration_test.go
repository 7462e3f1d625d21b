package integration

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/operator"
)

// TestARenewalThatConflictsWithAnotherWriterKeepsTheRegistration: when another writer
// (the fleet controller, the rights check) changes the registration's status between the
// operator's read and its renewal, the renewal reads it again and the operator keeps its
// id, instead of stopping as if another operator had taken it.
func TestARenewalThatConflictsWithAnotherWriterKeepsTheRegistration(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const id = "conflicted"
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: id}})
	})
	// Every other renewal first suffers a write of another writer, which
	// makes the resourceVersion it read stale: the API server refuses it.
	var renewals, interfered atomic.Int32
	direct, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Client.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	c := interceptor.NewClient(direct, interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if renewals.Add(1)%2 == 0 {
				other := &camelv1alpha1.IntegrationOperator{}
				if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), other); err != nil {
					return err
				}
				meta.SetStatusCondition(&other.Status.Conditions, metav1.Condition{Type: "Deployed",
					Status: metav1.ConditionTrue, Reason: "Other", Message: fmt.Sprintf("another writer, write %d", interfered.Load())})
				if err := env.Client.Status().Update(ctx, other); err != nil {
					return err
				}
				interfered.Add(1)
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	})
	cs, err := kubernetes.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	broadcaster.StartRecordingToSink(ctx.Done())
	stopped := make(chan error, 1)
	r := &operator.Registrar{Client: c, ID: id, Namespace: "ops", Version: "test", Identity: "test_1",
		Interval: 200 * time.Millisecond, StaleAfter: 5 * time.Second, Clock: clock.RealClock{},
		Recorder: broadcaster.NewRecorder(env.Client.Scheme(), "test"), OnRegistered: func(context.Context) error { return nil }}
	go func() { stopped <- r.Start(ctx) }()
	g.Consistently(stopped, 3*time.Second, 100*time.Millisecond).ShouldNot(Receive(), "the operator stopped")
	g.Expect(interfered.Load()).To(BeNumerically(">=", 3), "no renewal conflicted")
	iop := &camelv1alpha1.IntegrationOperator{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: id}, iop)).To(Succeed())
	g.Expect(time.Since(iop.Status.HeartbeatTime.Time)).To(BeNumerically("<", 2*time.Second), "the heartbeat stopped")
	g.Expect(iop.Status.Conditions).To(ContainElement(HaveField("Type", "Deployed")), "the other writer's condition was lost")
}

// TestAnOperatorReadsAnotherRegistrationAtMostOnceASecond: an operator
// does not watch other operators' registrations; it reads one when a
// handover needs it. Sixteen concurrent reads of one registration make one
// request to the API server, a read within the second after serves the same
// answer, and one after it reads again and sees the new heartbeat. A
// remembered registration is judged at the time it was read: one that was
// live then is live, even once its heartbeat would be stale now. A
// registration that does not exist is not found, also when served again.
func TestAnOperatorReadsAnotherRegistrationAtMostOnceASecond(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	counted := &countingReader{Reader: env.Client}
	requests := &counted.gets
	clk := clocktesting.NewFakePassiveClock(time.Now())
	regs := controller.NewRecentRegistrations(counted, clk)

	iop := &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: "read-once"}}
	g.Expect(env.Client.Create(ctx, iop)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), iop) })
	beat := func(at time.Time) {
		iop.Status.HeartbeatTime = &metav1.Time{Time: at}
		iop.Status.Namespace = "read-once-system"
		iop.Status.StaleAfterSeconds = 30
		g.Expect(env.Client.Status().Update(ctx, iop)).To(Succeed())
	}
	first := clk.Now().Truncate(time.Second)
	beat(first)

	heartbeats := make(chan time.Time, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, _, err := regs.Read(ctx, "read-once")
			if err != nil || got == nil {
				t.Errorf("reading the registration: %v %v", got, err)
				return
			}
			heartbeats <- got.Status.HeartbeatTime.Time
		}()
	}
	wg.Wait()
	close(heartbeats)
	for hb := range heartbeats {
		g.Expect(hb.Equal(first)).To(BeTrue(), "a concurrent read saw heartbeat %s, not %s", hb, first)
	}
	g.Expect(requests.Load()).To(Equal(int32(1)), "16 concurrent reads of one registration")

	t.Log("judged at the time of its read, a remembered registration stays live while its heartbeat would be stale now")
	clk.SetTime(first.Add(time.Minute))
	g.Expect(regs.Serves(ctx, "read-once", "anywhere")).To(BeTrue())
	g.Expect(requests.Load()).To(Equal(int32(1)), "a read within the second is served again")

	beat(first.Add(10 * time.Second))
	g.Eventually(func() time.Time {
		got, _, err := regs.Read(ctx, "read-once")
		g.Expect(err).NotTo(HaveOccurred())
		return got.Status.HeartbeatTime.Time
	}, 5*time.Second, 200*time.Millisecond).Should(BeTemporally("==", first.Add(10*time.Second)))
	g.Expect(requests.Load()).To(Equal(int32(2)), "one more request once the second has passed")
	t.Log("read again a minute after its first heartbeat, the registration is stale: 50 s since its last one, beyond 30")
	clk.SetTime(first.Add(time.Minute))
	g.Eventually(func() (bool, error) { return regs.Serves(ctx, "read-once", "anywhere") }, 5*time.Second, 200*time.Millisecond).Should(BeFalse())

	before := requests.Load()
	g.Expect(regs.Serves(ctx, "read-once-missing", "anywhere")).To(BeFalse())
	missing, _, err := regs.Read(ctx, "read-once-missing")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(missing).To(BeNil())
	g.Expect(requests.Load()-before).To(Equal(int32(1)), "a registration not found is served again too")
}

// countingReader counts the reads that reach the API server.
type countingReader struct {
	client.Reader
	gets atomic.Int32
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets.Add(1)
	return c.Reader.Get(ctx, key, obj, opts...)
}

// TestTheHeartbeatGaugeFollowsTheRegistration: the running operator serves the time of its last
// renewal, which is the registration's heartbeat, and the registration's life beside it.
func TestTheHeartbeatGaugeFollowsTheRegistration(t *testing.T) {
	g := NewWithT(t)
	gauge := func(name string) float64 {
		families, err := ctrlmetrics.Registry.Gather()
		g.Expect(err).NotTo(HaveOccurred())
		for _, f := range families {
			if f.GetName() != name {
				continue
			}
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "operator_id" && l.GetValue() == operatorID {
						return m.GetGauge().GetValue()
					}
				}
			}
		}
		return -1
	}
	g.Eventually(func() float64 { return gauge("caravan_registration_stale_after_seconds") }, timeout, poll).
		Should(Equal(3.0), "the test operator's registration lives 3s")
	g.Eventually(func() error {
		iop := &camelv1alpha1.IntegrationOperator{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Name: operatorID}, iop); err != nil {
			return err
		}
		served := gauge("caravan_registration_heartbeat_timestamp_seconds")
		if beat := float64(iop.Status.HeartbeatTime.Unix()); served < beat-1 || served > beat+1 {
			return fmt.Errorf("the gauge says %.0f, the registration's heartbeat is %.0f", served, beat)
		}
		return nil
	}, timeout, poll).Should(Succeed())
}

// TestAnOperatorWritesTheNamespacesItServesIntoARegistrationThatAsksForThem: an operator of some
// namespaces writes them into a registration annotated WatchNamespacesFromAnnotation (as the
// kustomize component applies it), whatever it said before, and into one it creates (as under
// OLM). It never changes a registration without the annotation (one caravan install applies).
func TestAnOperatorWritesTheNamespacesItServesIntoARegistrationThatAsksForThem(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs, err := kubernetes.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	broadcaster.StartRecordingToSink(ctx.Done())
	asks := map[string]string{camelv1alpha1.WatchNamespacesFromAnnotation: camelv1alpha1.WatchNamespacesFromOperator}
	for _, tc := range []struct {
		id          string
		exists      bool
		annotations map[string]string
		declared    []string
		want        []string
	}{
		{"asks-unsaid", true, asks, nil, []string{"team-a", "team-b"}},
		{"asks-stale", true, asks, []string{"team-c"}, []string{"team-a", "team-b"}},
		{"absent", false, nil, nil, []string{"team-a", "team-b"}},
		{"installed", true, nil, []string{"team-c"}, []string{"team-c"}},
		{"installed-unsaid", true, nil, nil, nil},
	} {
		t.Cleanup(func() {
			_ = env.Client.Delete(context.Background(), &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: tc.id}})
		})
		if tc.exists {
			g.Expect(env.Client.Create(ctx, &camelv1alpha1.IntegrationOperator{
				ObjectMeta: metav1.ObjectMeta{Name: tc.id, Annotations: tc.annotations},
				Spec:       camelv1alpha1.IntegrationOperatorSpec{WatchNamespaces: tc.declared}})).To(Succeed())
		}
		r := &operator.Registrar{Client: env.Client, ID: tc.id, Namespace: "ops", Version: "test", Identity: "test_1",
			WatchNamespaces: []string{"team-a", "team-b"}, Interval: 200 * time.Millisecond, StaleAfter: 5 * time.Second,
			Clock: clock.RealClock{}, Recorder: broadcaster.NewRecorder(env.Client.Scheme(), "test"),
			OnRegistered: func(context.Context) error { return nil }}
		go func() { _ = r.Start(ctx) }()
		g.Eventually(func(g Gomega) {
			iop := &camelv1alpha1.IntegrationOperator{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: tc.id}, iop)).To(Succeed())
			g.Expect(iop.Status.HeartbeatTime).NotTo(BeNil(), "not renewed yet")
			g.Expect(iop.Spec.WatchNamespaces).To(Equal(tc.want), "registration %s", tc.id)
		}, timeout, poll).Should(Succeed())
	}
}
