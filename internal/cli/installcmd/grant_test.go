package installcmd

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
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

// TestGrantAsOperatorDeclaresAnOperatorThatIsNotCaravans: against a real API server, grant
// --as-operator refuses the id of a Caravan operator, binds caravan:foreign-operator:ID to each
// subject in every namespace, mends the role's rules, makes a Caravan install of that id refuse,
// and --revoke deletes the bindings, then the role.
func TestGrantAsOperatorDeclaresAnOperatorThatIsNotCaravans(t *testing.T) {
	ns := clitest.Cluster(t).Namespace(t)
	c := clitest.Cluster(t).Client
	ctx := context.Background()
	grant := func(o GrantOptions) (string, error) {
		streams, _, out, _ := genericiooptions.NewTestIOStreams()
		o.IOStreams, o.Client, o.Namespace, o.AsOperator = streams, c, ns, true
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		err := o.Run(ctx)
		return out.String(), err
	}
	caravans := "caravan-" + ns[len(ns)-6:]
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: install.UserRole(caravans)}, Rules: []rbacv1.PolicyRule{install.UseRule(caravans)}}
	clitest.Create(t, role)
	t.Cleanup(func() { _ = c.Delete(ctx, role) })
	_, err := grant(GrantOptions{OperatorID: caravans, To: []string{"serviceaccount:camel-k-operator"}})
	if err == nil || !strings.Contains(err.Error(), "is a Caravan operator") || command.ExitCode(err) != command.ExitUsage {
		t.Fatalf("a Caravan operator's id: got %v (exit %d)", err, command.ExitCode(err))
	}

	id := "ck-" + ns[len(ns)-6:]
	out, err := grant(GrantOptions{OperatorID: id, To: []string{"serviceaccount:camel-k-operator", "user:ck"}})
	if err != nil || strings.Count(out, "created: ") != 3 || !strings.Contains(out, "serviceaccount "+ns+"/camel-k-operator is operator "+id+", not Caravan's") {
		t.Fatalf("--as-operator: %v\n%s", err, out)
	}
	foreign := &rbacv1.ClusterRole{}
	if err := c.Get(ctx, client.ObjectKey{Name: install.ForeignRole(id)}, foreign); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(foreign.Rules, install.ForeignRoleManifest(id).Rules) {
		t.Errorf("the role's rules: %+v", foreign.Rules)
	}
	bindings := &rbacv1.ClusterRoleBindingList{}
	if err := c.List(ctx, bindings, client.MatchingLabels{install.ForeignLabel: id}); err != nil || len(bindings.Items) != 2 {
		t.Fatalf("the bindings: %v, %+v", err, bindings.Items)
	}
	foreign.Rules = foreign.Rules[:1]
	if err := c.Update(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	if out, err = grant(GrantOptions{OperatorID: id, To: []string{"user:ck"}}); err != nil ||
		!strings.Contains(out, "updated: its rules were changed") || !strings.Contains(out, "unchanged") {
		t.Errorf("a grant over a changed role: %v\n%s", err, out)
	}
	installer := &install.Installer{Client: c}
	if err := installer.Check(ctx, install.Config{ID: id, Namespace: ns}, false); err == nil || !strings.Contains(err.Error(), "is declared an operator that is not Caravan's") {
		t.Errorf("a Caravan install of the id: got %v", err)
	}
	if err := installer.Uninstall(ctx, "another", ns, true); err == nil || !strings.Contains(err.Error(), "runs on the CRDs that --all removes") {
		t.Errorf("uninstall --all beside it: got %v", err)
	}

	if out, err = grant(GrantOptions{OperatorID: id, To: []string{"user:ck"}, Revoke: true}); err != nil || strings.Contains(out, "clusterrole ") {
		t.Fatalf("revoking one of two: %v\n%s", err, out)
	}
	out, err = grant(GrantOptions{OperatorID: id, To: []string{"serviceaccount:camel-k-operator"}, Revoke: true})
	if err != nil || !strings.Contains(out, "clusterrole "+install.ForeignRole(id)+" deleted") {
		t.Fatalf("revoking the last: %v\n%s", err, out)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: install.ForeignRole(id)}, &rbacv1.ClusterRole{}); !apierrors.IsNotFound(err) {
		t.Errorf("the role after the last revoke: %v", err)
	}
}
