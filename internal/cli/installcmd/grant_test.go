package installcmd

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/internal/cli/clitest"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/command"
	"github.com/caravan-dev/caravan/internal/install"
)

func TestGrantRefusesSubjectsItCannotName(t *testing.T) {
	for to, want := range map[string]string{
		"alice":                  "want user:NAME",
		"robot:r2":               `unknown kind "robot"`,
		"group:":                 "want user:NAME",
		"serviceaccount:Bad_SA":  "the service account's name",
		"serviceaccount:x:y:z":   "the service account's name",
		"serviceaccount:NS:name": "the service account's namespace",
	} {
		o := &GrantOptions{OperatorID: "tenant-a", To: []string{to}, Cluster: cmdutil.Cluster{Namespace: "team-a"}}
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--to %s: got %v, want %q", to, err, want)
		}
	}
	o := &GrantOptions{OperatorID: "tenant-a", Cluster: cmdutil.Cluster{Namespace: "team-a"},
		To: []string{"user:alice", "group:team-a", "serviceaccount:ci", "sa:tools:deployer"}}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	want := []rbacv1.Subject{
		{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "alice"},
		{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "team-a"},
		{Kind: rbacv1.ServiceAccountKind, Namespace: "team-a", Name: "ci"},
		{Kind: rbacv1.ServiceAccountKind, Namespace: "tools", Name: "deployer"},
	}
	for i, s := range o.subjects {
		if s != want[i] {
			t.Errorf("subject %d: got %+v, want %+v", i, s, want[i])
		}
	}
	for _, bad := range []*GrantOptions{{To: []string{"user:a"}}, {OperatorID: "tenant-a"}, {OperatorID: "tenant-a", To: []string{"user:a"}, Output: "wide"}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v: accepted", bad)
		}
	}
}

// TestGrantBindsTheOperatorsUserRoleOncePerSubject: against a real API server, grant refuses an
// operator that is not installed, binds <id>-operator-user to each subject, says so again
// without a change, refuses to take over a binding of the same name that grants something
// else, prints without writing with -o, and --revoke deletes.
func TestGrantBindsTheOperatorsUserRoleOncePerSubject(t *testing.T) {
	ns := clitest.Cluster(t).Namespace(t)
	c := clitest.Cluster(t).Client
	ctx := context.Background()
	grant := func(o GrantOptions) (string, error) {
		streams, _, out, _ := genericiooptions.NewTestIOStreams()
		o.IOStreams, o.Client, o.Namespace = streams, c, ns
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		err := o.Run(ctx)
		return out.String(), err
	}
	id := "grant-" + ns[len(ns)-6:]
	_, err := grant(GrantOptions{OperatorID: id, To: []string{"user:alice"}})
	if err == nil || !strings.Contains(err.Error(), "operator "+id+" is not installed") || command.ExitCode(err) != command.ExitUsage {
		t.Fatalf("an operator not installed: got %v (exit %d)", err, command.ExitCode(err))
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: install.UserRole(id)}, Rules: []rbacv1.PolicyRule{install.UseRule(id)}}
	clitest.Create(t, role)
	t.Cleanup(func() { _ = c.Delete(ctx, role) })

	out, err := grant(GrantOptions{OperatorID: id, To: []string{"user:alice"}, Output: "yaml"})
	if err != nil || !strings.Contains(out, "kind: RoleBinding") || !strings.Contains(out, "name: "+install.UserRole(id)) {
		t.Fatalf("-o yaml: %v\n%s", err, out)
	}
	out, err = grant(GrantOptions{OperatorID: id, To: []string{"user:alice", "group:team-a"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"created: user alice may run work on operator " + id + " in namespace " + ns,
		"created: group team-a may run work on operator " + id} {
		if !strings.Contains(out, want) {
			t.Errorf("the grant lacks %q:\n%s", want, out)
		}
	}
	bindings := &rbacv1.RoleBindingList{}
	if err := c.List(ctx, bindings, client.InNamespace(ns), client.MatchingLabels{install.GrantLabel: id}); err != nil {
		t.Fatal(err)
	}
	if len(bindings.Items) != 2 {
		t.Fatalf("%d bindings, want 2 (-o yaml wrote one?)", len(bindings.Items))
	}
	for _, b := range bindings.Items {
		if b.RoleRef.Name != install.UserRole(id) || len(b.Subjects) != 1 {
			t.Errorf("binding %s: %+v", b.Name, b)
		}
	}
	if out, err = grant(GrantOptions{OperatorID: id, To: []string{"user:alice"}}); err != nil || !strings.Contains(out, "unchanged") {
		t.Errorf("a second grant: %v\n%s", err, out)
	}

	taken := bindings.Items[0].DeepCopy()
	taken.Subjects = append(taken.Subjects, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "mallory"})
	if err := c.Update(ctx, taken); err != nil {
		t.Fatal(err)
	}
	who := "user:" + taken.Subjects[0].Name
	if taken.Subjects[0].Kind == rbacv1.GroupKind {
		who = "group:" + taken.Subjects[0].Name
	}
	if _, err := grant(GrantOptions{OperatorID: id, To: []string{who}}); err == nil || !strings.Contains(err.Error(), "grants something else") {
		t.Errorf("a binding of the name that grants more: got %v", err)
	}

	if _, err := grant(GrantOptions{OperatorID: id, To: []string{who}, Revoke: true}); err == nil || !strings.Contains(err.Error(), "left alone") {
		t.Errorf("revoking a binding of the name that grants more: got %v", err)
	}
	if err := c.Delete(ctx, taken); err != nil {
		t.Fatal(err)
	}
	out, err = grant(GrantOptions{OperatorID: id, To: []string{"user:alice", "group:team-a"}, Revoke: true})
	if err != nil || strings.Count(out, "deleted: ") != 1 || strings.Count(out, "not found") != 1 {
		t.Fatalf("--revoke: %v\n%s", err, out)
	}
	for _, b := range bindings.Items {
		if err := c.Get(ctx, client.ObjectKeyFromObject(&b), &rbacv1.RoleBinding{}); !apierrors.IsNotFound(err) {
			t.Errorf("binding %s after --revoke: %v", b.Name, err)
		}
	}
	if out, err = grant(GrantOptions{OperatorID: id, To: []string{"user:alice"}, Revoke: true}); err != nil || !strings.Contains(out, "not found") {
		t.Errorf("revoking twice: %v\n%s", err, out)
	}
}
