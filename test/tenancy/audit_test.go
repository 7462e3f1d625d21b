package tenancy

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/test/harness"
)

// auditEvent is what the tests read of an audit log line.
type auditEvent struct {
	Verb string `json:"verb"`
	User struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	Received time.Time `json:"requestReceivedTimestamp"`
}

// writesOf returns, per integration of namespace ns, the successful
// writes by user to it or its children (Deployment, ConfigMap, Service).
func writesOf(t *testing.T, ns, user string) map[string][]auditEvent {
	t.Helper()
	out := map[string][]auditEvent{}
	eachAuditEvent(t, func(e auditEvent) {
		if e.User.Username != user || e.ObjectRef.Namespace != ns {
			return
		}
		if e.ResponseStatus.Code < 200 || e.ResponseStatus.Code >= 300 {
			return
		}
		name := e.ObjectRef.Name
		if e.ObjectRef.Resource == "configmaps" && len(name) > len("-camel") {
			name = name[:len(name)-len("-camel")]
		}
		out[name] = append(out[name], e)
	})
	return out
}

// eachAuditEvent calls each with every event of the audit log.
func eachAuditEvent(t *testing.T, each func(auditEvent)) {
	t.Helper()
	f, err := os.Open(env.Cluster.AuditLogPath())
	if err != nil {
		t.Fatalf("opening the audit log: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e auditEvent
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			each(e)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the audit log: %v", err)
	}
}

func operatorUser(ns, id string) string {
	return "system:serviceaccount:" + ns + ":" + id + "-operator"
}

func createMany(t *testing.T, ns, prefix, id string, n int) []*camelv1.Integration {
	t.Helper()
	its := make([]*camelv1.Integration, n)
	var wg sync.WaitGroup
	for i := range n {
		its[i] = harness.NewIntegration(ns, fmt.Sprintf("%s-%02d", prefix, i), id, 1)
		wg.Add(1)
		go func(it *camelv1.Integration) {
			defer wg.Done()
			if err := env.Client.Create(context.Background(), it); err != nil {
				t.Errorf("creating %s: %v", it.Name, err)
			}
		}(its[i])
	}
	wg.Wait()
	return its
}

func waitAllRunningUnder(t *testing.T, its []*camelv1.Integration, id string) {
	t.Helper()
	NewWithT(t).Eventually(func() error {
		for _, it := range its {
			if err := env.RunningUnder(client.ObjectKeyFromObject(it), id); err != nil {
				return err
			}
		}
		return nil
	}, 3*timeout, time.Second).Should(Succeed())
}

// TestMovesAreCleanInTheAuditLog moves 50 integrations from A to B while
// A is busy with 30 new ones, and reads the API server's audit log: for
// every moved integration, A's last write to it or its children was
// received before B's first. (Received, not completed: the API server
// sends the watch event of a committed write before it completes the
// request, so B may act on A's release before A's request is done. A's
// writes carry the resourceVersion they read, so one that came after a
// write of B's would fail, and failed writes are not counted.)
func TestMovesAreCleanInTheAuditLog(t *testing.T) {
	g := NewWithT(t)
	ensureDefault(t)
	ops, apps, busy := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	install(t, ops, "mover-a")
	install(t, ops, "mover-b")
	moved := createMany(t, apps, "moved", "mover-a", 50)
	waitAllRunningUnder(t, moved, "mover-a")

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); createMany(t, busy, "busy", "mover-a", 30) }()
	for _, it := range moved {
		g.Expect(annotate(env.Client, it, "mover-b")).To(Succeed())
	}
	wg.Wait()
	waitAllRunningUnder(t, moved, "mover-b")

	movesAreClean(t, apps, operatorUser(ops, "mover-a"), operatorUser(ops, "mover-b"), moved)
}

// movesAreClean reads the audit log: for every integration of moved, in
// namespace apps, the last write of identity a (the previous owner) to it
// or its children was received before the first write of identity b (the
// new owner), and a wrote its status (the release).
func movesAreClean(t *testing.T, apps, a, b string, moved []*camelv1.Integration) {
	t.Helper()
	g := NewWithT(t)
	byA, byB := writesOf(t, apps, a), writesOf(t, apps, b)
	for _, it := range moved {
		first := firstReceived(byB[it.Name])
		g.Expect(first.IsZero()).To(BeFalse(), "no write by B to %s in the audit log", it.Name)
		released := false
		for _, e := range byA[it.Name] {
			g.Expect(e.Received.Before(first)).To(BeTrue(),
				"%s: A wrote %s %s/%s at %s, after B's first write at %s", it.Name, e.Verb, e.ObjectRef.Resource,
				e.ObjectRef.Subresource, e.Received.Format(time.RFC3339Nano), first.Format(time.RFC3339Nano))
			released = released || e.ObjectRef.Subresource == "status"
		}
		g.Expect(released).To(BeTrue(), "A never wrote the status of %s (its release)", it.Name)
	}
}

// TestEveryWaveOfACanaryIsCleanInTheAuditLog: `caravan reassign --waves`
// moves 12 integrations from A to B in three waves, each once the one
// before runs under B; the audit log shows every move as clean as a single
// one: A's last write to each integration came before B's first.
func TestEveryWaveOfACanaryIsCleanInTheAuditLog(t *testing.T) {
	g := NewWithT(t)
	ensureDefault(t)
	ops, apps := env.Namespace(t), env.Namespace(t)
	install(t, ops, "wave-a")
	install(t, ops, "wave-b")
	moved := createMany(t, apps, "waved", "wave-a", 12)
	waitAllRunningUnder(t, moved, "wave-a")
	admin := env.Kubeconfig(t, "admin", "system:masters")
	out, errOut, err := cli(t, admin, "reassign", "-n", apps, "--from", "wave-a", "--to", "wave-b", "--waves", "3,8", "--wave-timeout", "2m")
	g.Expect(err).NotTo(HaveOccurred(), "%s\n%s", out, errOut)
	g.Expect(out).To(And(ContainSubstring("wave 1/3: moving 3 to wave-b (3 of 12)"), ContainSubstring("wave 3/3: 4 running under wave-b"),
		ContainSubstring("moved 12 from wave-a to wave-b in 3 waves")))
	waitAllRunningUnder(t, moved, "wave-b")
	movesAreClean(t, apps, operatorUser(ops, "wave-a"), operatorUser(ops, "wave-b"), moved)
}

// TestAGoneOperatorIsTakenOverOnlyAfterItsHeartbeatExpires: A is killed
// (SIGKILL, no release); B adopts its integrations once A's registration
// is stale, and not before.
func TestAGoneOperatorIsTakenOverOnlyAfterItsHeartbeatExpires(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ensureDefault(t)
	ops, apps := env.Namespace(t), env.Namespace(t)
	install(t, ops, "killed-a")
	install(t, ops, "heir-b")
	its := createMany(t, apps, "inherited", "killed-a", 5)
	waitAllRunningUnder(t, its, "killed-a")

	env.KillOperator(t, ops, "killed-a")
	// A heartbeat A sent just before it died may land after this read:
	// this expiry can only be earlier than the real one, which makes the
	// window in which B must be seen waiting shorter, never longer. B's
	// writes are compared with the real expiry, read again at the end.
	expiry := expiryOf(t, "killed-a")

	for _, it := range its {
		g.Expect(annotate(env.Client, it, "heir-b")).To(Succeed())
	}
	heir := env.OperatorMetricsURL(t, ops, "heir-b")
	metric := func(name string, labels ...string) func() float64 {
		return func() float64 {
			v, _ := env.Metric(heir, name, labels...)
			return v
		}
	}
	g.Expect(time.Until(expiry)).To(BeNumerically(">", 5*time.Second), "A's registration expires too soon to see B wait")
	g.Eventually(metric("caravan_integrations_awaiting_release"), time.Until(expiry), poll).Should(Equal(5.0),
		"B shows the integrations that wait for a release")
	waitAllRunningUnder(t, its, "heir-b")
	g.Eventually(metric("caravan_integrations_awaiting_release"), timeout, poll).Should(BeZero())
	// B counts an adoption once its write has returned, which may be
	// after the status that write made was seen above.
	g.Eventually(metric("caravan_integration_adoptions_total", `after="expiry"`), timeout, poll).Should(Equal(5.0))
	g.Expect(metric("caravan_integration_adoptions_total", `after="release"`)()).To(BeZero())
	// Per integration: a Warning that B waited long for A, then one that
	// B took it over.
	g.Eventually(func() (map[string]int, error) {
		events := &eventsv1.EventList{}
		if err := env.Client.List(ctx, events, client.InNamespace(apps)); err != nil {
			return nil, err
		}
		warnings := map[string]int{}
		for _, e := range events.Items {
			switch {
			case e.Type != "Warning":
			case e.Reason == "Adopted" && strings.Contains(e.Note, "expired without a release"):
				warnings["takeover"]++
			case e.Reason == "AwaitingRelease" && strings.Contains(e.Note, "for operator killed-a to release it"):
				warnings["long wait"]++
			}
		}
		return warnings, nil
	}, timeout, poll).Should(Equal(map[string]int{"takeover": 5, "long wait": 5}))
	tookOverAfter(t, apps, operatorUser(ops, "heir-b"), its, expiryOf(t, "killed-a"))
}

// registration is operator id's registration as the API server holds it.
func registration(id string) (ownership.Registration, error) {
	iop := &camelv1alpha1.IntegrationOperator{}
	err := env.Client.Get(context.Background(), client.ObjectKey{Name: id}, iop)
	return ownership.FromOperator(iop), err
}

// expiryOf is when operator id's registration expires, from its last
// heartbeat.
func expiryOf(t *testing.T, id string) time.Time {
	t.Helper()
	reg, err := registration(id)
	if err != nil {
		t.Fatal(err)
	}
	return reg.Heartbeat.Add(reg.StaleAfter)
}

// tookOverAfter reads the audit log: identity b, the new owner, wrote to
// each integration of its, in namespace apps, and its first write was
// received no earlier than expiry (the previous owner's registration's).
func tookOverAfter(t *testing.T, apps, b string, its []*camelv1.Integration, expiry time.Time) {
	t.Helper()
	g := NewWithT(t)
	byB := writesOf(t, apps, b)
	for _, it := range its {
		first := firstReceived(byB[it.Name])
		g.Expect(first.IsZero()).To(BeFalse(), "no write by B to %s in the audit log", it.Name)
		g.Expect(first.Before(expiry)).To(BeFalse(),
			"B wrote to %s at %s, before A's registration expired at %s", it.Name, first, expiry)
	}
}

func firstReceived(events []auditEvent) time.Time {
	var first time.Time
	for _, e := range events {
		if first.IsZero() || e.Received.Before(first) {
			first = e.Received
		}
	}
	return first
}

// TestOnlyTheDefaultOperatorWatchesRegistrations: each operator's
// heartbeat is a write of its registration, so if every operator watched
// every registration, M operators would receive M² events. The audit log
// shows that an operator that is not the default neither lists nor
// watches registrations (it reads the one a handover needs), while the
// default operator, which marks orphans, watches them all.
func TestOnlyTheDefaultOperatorWatchesRegistrations(t *testing.T) {
	g := NewWithT(t)
	ensureDefault(t)
	ops := env.Namespace(t)
	install(t, ops, "quiet-x")
	defaultUser, user := operatorUser("caravan-system", "camel-k"), operatorUser(ops, "quiet-x")
	g.Eventually(func() []string { return registrationReads(t)[defaultUser] }, timeout, time.Second).
		Should(ContainElement("watch"), "the default operator's watch of registrations is not in the audit log")
	g.Consistently(func() []string { return registrationReads(t)[user] }, 5*time.Second, time.Second).
		Should(BeEmpty(), "operator quiet-x lists or watches registrations")
}

// registrationReads returns, per user, the verbs of the lists and watches
// of registrations in the audit log.
func registrationReads(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	eachAuditEvent(t, func(e auditEvent) {
		if e.ObjectRef.Resource == "integrationoperators" && (e.Verb == "list" || e.Verb == "watch") {
			out[e.User.Username] = append(out[e.User.Username], e.Verb)
		}
	})
	return out
}
