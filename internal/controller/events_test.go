package controller

import (
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

func TestCutNote(t *testing.T) {
	cases := []struct {
		name string
		note string
		want int // length in bytes of the cut note
	}{
		{"a short note is kept as it is", "Kamelet k in phase \"Error\": 100% wrong", 38},
		{"a note of exactly the limit is kept as it is", strings.Repeat("a", MaxEventNote), MaxEventNote},
		{"a long note is cut to the limit", strings.Repeat("a", 2*MaxEventNote), MaxEventNote},
		{"a long note of multi-byte runes is cut before the rune the limit splits", strings.Repeat("é", MaxEventNote), MaxEventNote - 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := CutNote(tc.note, "...")
			if len(got) != tc.want {
				t.Errorf("cut to %d bytes, want %d", len(got), tc.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("the cut note is not valid UTF-8: %q", got[len(got)-8:])
			}
			if len(tc.note) > MaxEventNote && !strings.HasSuffix(got, "...") {
				t.Errorf("a cut note does not end in the marker: %q", got[len(got)-8:])
			}
		})
	}
}

func TestEventKeepsAPercentSignAsWritten(t *testing.T) {
	rec := events.NewFakeRecorder(1)
	Event(rec, nil, nil, corev1.EventTypeWarning, "KameletPhaseUpdated", "Validate", "100% wrong: %s %d")
	if got, want := <-rec.Events, "Warning KameletPhaseUpdated 100% wrong: %s %d"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestPhaseEvent(t *testing.T) {
	notReady := []metav1.Condition{{Type: camelv1.ConditionReady, Status: metav1.ConditionFalse, Message: "no kit"}}
	var noIntegration *camelv1.Integration
	cases := []struct {
		name    string
		failed  bool
		related client.Object
		want    string
	}{
		{"a phase that is no failure is a Normal Event", false, nil, `Normal PipePhaseUpdated Pipe p in phase "Creating": no kit`},
		{"a failed phase is a Warning Event", true, nil, `Warning PipePhaseUpdated Pipe p in phase "Creating": no kit`},
		{"a nil related object counts as none", false, noIntegration, `Normal PipePhaseUpdated Pipe p in phase "Creating": no kit`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := events.NewFakeRecorder(1)
			p := &camelv1.Pipe{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
			PhaseEvent(rec, p, tc.related, "Pipe", "Reconcile", "Creating", tc.failed, notReady)
			if got := <-rec.Events; got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPhaseNote(t *testing.T) {
	notReady := []metav1.Condition{{Type: camelv1.ConditionReady, Status: metav1.ConditionFalse, Message: "rolling out"}}
	ready := []metav1.Condition{{Type: camelv1.ConditionReady, Status: metav1.ConditionTrue, Message: "1/1 pods ready"}}
	cases := []struct {
		name       string
		conditions []metav1.Condition
		want       string
	}{
		{"a resource that is not Ready says why", notReady, `Integration it in phase "Deploying": rolling out`},
		{"a Ready resource names its phase only", ready, `Integration it in phase "Deploying"`},
		{"a resource with no Ready condition names its phase only", nil, `Integration it in phase "Deploying"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := PhaseNote("Integration", "it", "Deploying", tc.conditions); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
