package operator

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/caravan-dev/caravan/internal/controller"
)

func TestMissingRulesAreDescribedByResourceWithTheirVerbs(t *testing.T) {
	got := describeRules([]rbacv1.PolicyRule{
		{Verbs: []string{"list"}, APIGroups: []string{"apps"}, Resources: []string{"deployments"}},
		{Verbs: []string{"get"}, APIGroups: []string{"apps"}, Resources: []string{"deployments"}},
		{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}},
		{Verbs: []string{"use"}, APIGroups: []string{"camel.apache.org"}, Resources: []string{"integrationoperators"}, ResourceNames: []string{"a"}},
	})
	want := "get configmaps, get,list deployments.apps, use integrationoperators.camel.apache.org/a"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestALongMessageIsCutToAnEventsNote(t *testing.T) {
	short := "lacks get configmaps"
	if eventNote(short) != short {
		t.Fatalf("a short message was changed: %q", eventNote(short))
	}
	note := eventNote(strings.Repeat("x", 5000))
	if len(note) != controller.MaxEventNote || !strings.HasSuffix(note, "lists them all)") {
		t.Fatalf("note of %d bytes: %q", len(note), note[len(note)-80:])
	}
}
