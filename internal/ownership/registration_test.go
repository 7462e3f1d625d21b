package ownership

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
)

func TestCheckClaim(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	stale := 30 * time.Second
	cases := []struct {
		name       string
		reg        Registration
		wantOK     bool
		wantReason string
		wantInMsg  string
	}{
		{name: "a free id is claimed", reg: Registration{}, wantOK: true, wantReason: ReasonRegistered},
		{name: "an id registered to my namespace is mine again after a restart",
			reg: Registration{Namespace: "ns-a", Heartbeat: now.Add(-time.Second)}, wantOK: true, wantReason: ReasonRegistered},
		{name: "an id held by a live operator elsewhere is refused, naming it",
			reg:    Registration{Namespace: "ns-b", Leader: "pod-1", Heartbeat: now.Add(-5 * time.Second)},
			wantOK: false, wantReason: ReasonConflict, wantInMsg: "registered to the live operator in namespace ns-b (leader pod-1"},
		{name: "an id whose holder stopped its heartbeat is taken over",
			reg:    Registration{Namespace: "ns-b", Heartbeat: now.Add(-time.Minute)},
			wantOK: true, wantReason: ReasonStaleTakenOver, wantInMsg: "stopped renewing"},
		{name: "an id held elsewhere without any heartbeat is taken over",
			reg: Registration{Namespace: "ns-b"}, wantOK: true, wantReason: ReasonStaleTakenOver},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason, msg := CheckClaim(tc.reg, "ns-a", now, stale)
			if ok != tc.wantOK || reason != tc.wantReason || !strings.Contains(msg, tc.wantInMsg) {
				t.Fatalf("got (%v, %s, %q)", ok, reason, msg)
			}
		})
	}
}

func TestRefusedNamespaceReadsTheRefusalMessage(t *testing.T) {
	now := time.Now()
	_, _, msg := CheckClaim(Registration{Namespace: "ns-b", Heartbeat: now}, "ns-a", now, time.Minute)
	if got := RefusedNamespace(msg); got != "ns-a" {
		t.Fatalf("got %q from %q", got, msg)
	}
	if got := RefusedNamespace("something else"); got != "" {
		t.Fatalf("got %q from an unrelated message", got)
	}
}

func TestOrphaned(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	live := &camelv1alpha1.IntegrationOperator{}
	live.Name = "a"
	live.Status.HeartbeatTime = &metav1.Time{Time: now.Add(-5 * time.Second)}
	live.Status.StaleAfterSeconds = 30
	stale := live.DeepCopy()
	stale.Status.HeartbeatTime = &metav1.Time{Time: now.Add(-time.Minute)}
	scoped := live.DeepCopy()
	scoped.Spec.WatchNamespaces = []string{"team-a"}
	cases := []struct {
		name   string
		iop    *camelv1alpha1.IntegrationOperator
		ns     string
		reason string
	}{
		{name: "a resource of a live operator is no orphan", iop: live, ns: "x"},
		{name: "a resource of an unregistered id is an orphan", iop: nil, ns: "x", reason: ReasonNotRegistered},
		{name: "a resource of an operator whose heartbeat stopped is an orphan", iop: stale, ns: "x", reason: ReasonHeartbeatStale},
		{name: "a resource outside the operator's namespaces is an orphan", iop: scoped, ns: "team-b", reason: ReasonNotServingNamespace},
		{name: "a resource inside the operator's namespaces is no orphan", iop: scoped, ns: "team-a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reason, msg := Orphaned("a", tc.ns, tc.iop, now)
			if reason != tc.reason || (reason != "" && msg == "") {
				t.Fatalf("got %q (%q), want %q", reason, msg, tc.reason)
			}
		})
	}
}
