package api_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

func object(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestBadInputIsRefusedWithAClearMessage(t *testing.T) {
	ns := env.Namespace(t)
	cases := []struct {
		name     string
		manifest string
		messages []string
	}{
		{
			name: "an integration whose replicas is a string",
			manifest: `
apiVersion: camel.apache.org/v1
kind: Integration
metadata: {name: bad-replicas}
spec: {replicas: "two"}`,
			messages: []string{"spec.replicas", "integer"},
		},
		{
			name: "an integration with negative replicas",
			manifest: `
apiVersion: camel.apache.org/v1
kind: Integration
metadata: {name: negative-replicas}
spec: {replicas: -1}`,
			messages: []string{"spec.replicas", "greater than or equal to 0"},
		},
		{
			name: "an operator whose name has a dot",
			manifest: `
apiVersion: camel.apache.org/v1alpha1
kind: IntegrationOperator
metadata: {name: tenant.a}`,
			messages: []string{"operator id", "DNS-1123 label"},
		},
		{
			name: "an operator whose name is longer than 63 characters",
			manifest: `
apiVersion: camel.apache.org/v1alpha1
kind: IntegrationOperator
metadata: {name: ` + strings.Repeat("a", 64) + `}`,
			messages: []string{"operator id", "at most 63 characters"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			obj := object(t, tc.manifest)
			if obj.GetKind() != "IntegrationOperator" {
				obj.SetNamespace(ns)
			}
			err := env.Client.Create(context.Background(), obj)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
			for _, m := range tc.messages {
				g.Expect(err.Error()).To(ContainSubstring(m))
			}
		})
	}
}

func TestAValidOperatorIDIsAccepted(t *testing.T) {
	g := NewWithT(t)
	obj := object(t, `
apiVersion: camel.apache.org/v1alpha1
kind: IntegrationOperator
metadata: {name: tenant-a-2}
spec: {default: false}`)
	g.Expect(env.Client.Create(context.Background(), obj)).To(Succeed())
	g.Expect(env.Client.Delete(context.Background(), obj)).To(Succeed())
}

// TestADeclaredOperatorKeepsItsNamespace: spec.namespace, which tells the fleet
// controller where the operator runs, can be set but neither changed nor removed; the
// spec's other fields change freely.
func TestADeclaredOperatorKeepsItsNamespace(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	obj := object(t, `
apiVersion: camel.apache.org/v1alpha1
kind: IntegrationOperator
metadata: {name: declared-ns}
spec: {replicas: 1}`)
	g.Expect(env.Client.Create(ctx, obj)).To(Succeed())
	defer func() { _ = env.Client.Delete(ctx, obj) }()
	set := func(field string, value any) error {
		g.Expect(unstructured.SetNestedField(obj.Object, value, "spec", field)).To(Succeed())
		return env.Client.Update(ctx, obj)
	}
	g.Expect(set("namespace", "ops-a")).To(Succeed(), "an installed operator may become declared")
	g.Expect(set("replicas", int64(2))).To(Succeed())
	err := set("namespace", "ops-b")
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.namespace cannot change"))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	unstructured.RemoveNestedField(obj.Object, "spec", "namespace")
	err = env.Client.Update(ctx, obj)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.namespace cannot be removed"))
}
