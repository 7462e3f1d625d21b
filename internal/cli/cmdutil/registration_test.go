package cmdutil_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/cli/clitest"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
)

// operatorsUser is a client of the user name, who may do only verbs on
// IntegrationOperators (nothing at all without verbs), once the API server
// applies the grant.
func operatorsUser(t *testing.T, name string, verbs ...string) client.Client {
	t.Helper()
	c := clitest.Cluster(t).UserClient(t, name)
	if len(verbs) == 0 {
		return c
	}
	clitest.Create(t,
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{camelv1alpha1.GroupVersion.Group}, Resources: []string{"integrationoperators"}, Verbs: verbs,
		}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}},
		})
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true,
		func(ctx context.Context) (bool, error) {
			err := c.Get(ctx, client.ObjectKey{Name: "no-such-operator"}, &camelv1alpha1.IntegrationOperator{})
			return !apierrors.IsForbidden(err), nil
		})
	if err != nil {
		t.Fatalf("user %s may still not %v IntegrationOperators: %v", name, verbs, err)
	}
	return c
}

func TestCheckOperatorRegistered(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	admin := func(*testing.T) client.Reader { return clitest.Cluster(t).Client }
	cases := []struct {
		name     string
		objects  []client.Object
		as       func(*testing.T) client.Reader
		id       string
		wantErr  string
		wantWarn string
	}{
		{name: "a live registration passes quietly", id: "tenant-a",
			objects: []client.Object{clitest.RegisteredOperator("tenant-a", now.Add(-5*time.Second))}},
		{name: "an unregistered id is refused, naming the registered ones", id: "foo",
			objects: []client.Object{clitest.RegisteredOperator("tenant-a", now), clitest.RegisteredOperator("camel-k", now)},
			wantErr: `operator id "foo" is not registered; registered: camel-k, tenant-a (use --force to assign it anyway)`},
		{name: "an unregistered id on a cluster without operators says none", id: "foo",
			wantErr: `operator id "foo" is not registered; registered: none (use --force`},
		{name: "an unregistered id is refused even when the list is forbidden", id: "foo",
			objects: []client.Object{clitest.RegisteredOperator("tenant-a", now)},
			as:      func(t *testing.T) client.Reader { return operatorsUser(t, "may-get-operators", "get") },
			wantErr: `operator id "foo" is not registered (use --force to assign it anyway)`},
		{name: "a stale heartbeat is a warning", id: "tenant-a",
			objects:  []client.Object{clitest.RegisteredOperator("tenant-a", now.Add(-5*time.Minute))},
			wantWarn: `Warning: operator "tenant-a" is registered but its heartbeat is stale (last renewed 5m0s ago, at 2026-11-30T11:55:00Z)`},
		{name: "a registration without a heartbeat is a warning", id: "tenant-a",
			objects:  []client.Object{clitest.RegisteredOperator("tenant-a", time.Time{})},
			wantWarn: `Warning: operator "tenant-a" is registered but has never renewed its registration`},
		{name: "a forbidden GET is a warning, not an error", id: "tenant-a",
			objects:  []client.Object{clitest.RegisteredOperator("tenant-a", now)},
			as:       func(t *testing.T) client.Reader { return operatorsUser(t, "may-not-read-operators") },
			wantWarn: `Warning: cannot check that operator "tenant-a" is registered: `},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clitest.Create(t, tc.objects...)
			if tc.as == nil {
				tc.as = admin
			}
			c := tc.as(t)
			var warn bytes.Buffer
			err := cmdutil.CheckOperatorRegistered(context.Background(), c, tc.id, now, &warn)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
			if tc.wantWarn == "" && warn.Len() > 0 || !strings.Contains(warn.String(), tc.wantWarn) {
				t.Fatalf("want a warning containing %q, got %q", tc.wantWarn, warn.String())
			}
		})
	}
}

// countingReader counts the calls a check makes.
type countingReader struct {
	client.Reader
	gets, lists int
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.gets++
	return r.Reader.Get(ctx, key, obj, opts...)
}

func (r *countingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	r.lists++
	return r.Reader.List(ctx, list, opts...)
}

func TestCheckOperatorRegisteredIsOneGetWhenRegistered(t *testing.T) {
	now := time.Now()
	clitest.Create(t, clitest.RegisteredOperator("tenant-a", now))
	r := &countingReader{Reader: clitest.Cluster(t).Client}
	if err := cmdutil.CheckOperatorRegistered(context.Background(), r, "tenant-a", now, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if r.gets != 1 || r.lists != 0 {
		t.Fatalf("got %d GETs and %d LISTs, want one GET", r.gets, r.lists)
	}
}

func TestCaravanAppliedOperatorID(t *testing.T) {
	entry := func(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
	}
	const annotation = `{"f:metadata":{"f:annotations":{"f:camel.apache.org/operator.id":{}}}}`
	const label = `{"f:metadata":{"f:labels":{"f:camel.apache.org/operator.id":{}}},"f:spec":{"f:flows":{}}}`
	cases := []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		want    bool
	}{
		{name: "caravan applied the annotation", entries: []metav1.ManagedFieldsEntry{entry("caravan", metav1.ManagedFieldsOperationApply, annotation)}, want: true},
		{name: "kubectl set the annotation", entries: []metav1.ManagedFieldsEntry{
			entry("kubectl-annotate", metav1.ManagedFieldsOperationUpdate, annotation),
			entry("caravan", metav1.ManagedFieldsOperationApply, label)}},
		{name: "an operator applied the annotation", entries: []metav1.ManagedFieldsEntry{entry("caravan-operator", metav1.ManagedFieldsOperationApply, annotation)}},
		{name: "nobody manages anything"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := &metav1.ObjectMeta{ManagedFields: tc.entries}
			if got := cmdutil.CaravanAppliedOperatorID(obj); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}
