package ownership

import (
	"strings"
	"testing"
	"time"
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
