package controller

import (
	"fmt"
	"reflect"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// MaxEventNote is the longest note, in bytes, that the API server accepts in an Event.
const MaxEventNote = 1024

// Event records an Event whose note is note as written, cut to MaxEventNote bytes.
// The note goes through a constant format, so that a % in a message stays as it is.
func Event(rec events.EventRecorder, regarding, related runtime.Object, eventtype, reason, action, note string) {
	rec.Eventf(regarding, related, eventtype, reason, action, "%s", CutNote(note, "..."))
}

// CutNote cuts note to MaxEventNote bytes, ending in more, when it is longer.
// The cut falls on a rune boundary, so the note stays valid UTF-8.
func CutNote(note, more string) string {
	if len(note) <= MaxEventNote {
		return note
	}
	cut := MaxEventNote - len(more)
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut] + more
}

// PhaseEvent records the <kind>PhaseUpdated Event of obj's new phase, a Warning when failed.
// related is the object the phase follows, if any; a nil pointer counts as none.
func PhaseEvent(rec events.EventRecorder, obj, related client.Object, kind, action, phase string, failed bool, conditions []metav1.Condition) {
	eventtype := corev1.EventTypeNormal
	if failed {
		eventtype = corev1.EventTypeWarning
	}
	var rel runtime.Object
	if related != nil && !reflect.ValueOf(related).IsNil() {
		rel = related
	}
	Event(rec, obj, rel, eventtype, kind+"PhaseUpdated", action, PhaseNote(kind, obj.GetName(), phase, conditions))
}

// PhaseNote is the note of a phase-change Event: the phase, and Ready's message while Ready is not True.
func PhaseNote(kind, name, phase string, conditions []metav1.Condition) string {
	note := fmt.Sprintf("%s %s in phase %q", kind, name, phase)
	if c := meta.FindStatusCondition(conditions, camelv1.ConditionReady); c != nil && c.Status != metav1.ConditionTrue {
		note += ": " + c.Message
	}
	return note
}
