package api_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
