package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// assignedIntegration is an Integration in namespace ns, assigned (and
// labelled) to operatorID, or to none.
func assignedIntegration(ns, name, operatorID string) *camelv1.Integration {
	it := &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if operatorID != "" {
		it.Annotations = map[string]string{camelv1.OperatorIDAnnotation: operatorID}
		it.Labels = map[string]string{camelv1.OperatorIDLabel: operatorID}
	}
	return it
}

// controlledByPipe marks it as controlled by the Pipe named pipe.
func controlledByPipe(it *camelv1.Integration, pipe string) *camelv1.Integration {
	it.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: camelv1.GroupVersion.String(), Kind: kindPipe, Name: pipe, UID: "pipe-uid", Controller: ptr.To(true),
	}}
	return it
}

// remainingIntegrations names the integrations of namespace ns, sorted.
func remainingIntegrations(t *testing.T, ns string) []string {
	t.Helper()
	list := &camelv1.IntegrationList{}
	if err := cluster(t).Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range list.Items {
		names = append(names, it.Name)
	}
	slices.Sort(names)
	return names
}

func TestDeleteAllOfOneOperatorLeavesTheOthers(t *testing.T) {
	ns := cluster(t).Namespace(t)
	create(t, assignedIntegration(ns, "a1", "op-a"), assignedIntegration(ns, "a2", "op-a"),
		assignedIntegration(ns, "b1", "op-b"), assignedIntegration(ns, "none", ""),
		controlledByPipe(assignedIntegration(ns, "from-pipe", "op-a"), "p"))
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	o := &DeleteOptions{selectionCommand{integrationSelection: integrationSelection{All: true, OperatorID: "op-a"},
		namespace: ns, client: cluster(t).Client, IOStreams: streams}}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "integration \"a1\" deleted\nintegration \"a2\" deleted\n" {
		t.Fatalf("got output %q", got)
	}
	if !strings.Contains(errOut.String(), `Skipped: integration "from-pipe" is made from Pipe "p": delete that instead`) {
		t.Fatalf("got errors %q", errOut.String())
	}
	if got := strings.Join(remainingIntegrations(t, ns), ","); got != "b1,from-pipe,none" {
		t.Fatalf("remaining: %s", got)
	}
}

func TestDeleteByNameReportsWhatIsMissingAfterDeletingTheRest(t *testing.T) {
	ns := cluster(t).Namespace(t)
	create(t, assignedIntegration(ns, "a1", "op-a"), assignedIntegration(ns, "b1", "op-b"))
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := &DeleteOptions{selectionCommand{integrationSelection: integrationSelection{Names: []string{"gone", "a1", "b1", "lost"}, OperatorID: "op-a"},
		namespace: ns, client: cluster(t).Client, IOStreams: streams}}
	err := o.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`integrations not found in namespace %s: "gone", "lost"`, ns)) ||
		!strings.Contains(err.Error(), `integration "b1" is assigned to operator "op-b", not "op-a": left alone`) {
		t.Fatalf("got %v", err)
	}
	if out.String() != "integration \"a1\" deleted\n" {
		t.Fatalf("got output %q", out.String())
	}
	if got := strings.Join(remainingIntegrations(t, ns), ","); got != "b1" {
		t.Fatalf("remaining: %s", got)
	}
}

func TestIntegrationSelectionValidation(t *testing.T) {
	cases := []struct {
		name    string
		sel     integrationSelection
		wantErr string
	}{
		{name: "names and --all together", sel: integrationSelection{Names: []string{"a"}, All: true}, wantErr: "give integration names or --all, not both"},
		{name: "neither names nor --all", wantErr: "give the names of the integrations, or --all"},
		{name: "a bad operator id", sel: integrationSelection{All: true, OperatorID: "A"}, wantErr: "-x/--operator-id: invalid operator id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.sel.validate(); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}
