package api_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/config/crd"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/localcluster"
)

// TestAnInstallOverCamelKsCRDsKeepsWhatCamelKsOperatorWrites: over the CRD of Camel K's release
// (as its installer leaves it, labelled app=camel-k), an install applies Caravan's schema without
// --force, says whose CRD it was, and a status that Camel K's operator writes (its catalog, its
// traits, conditions with its timestamps and without a message) keeps every field.
func TestAnInstallOverCamelKsCRDsKeepsWhatCamelKsOperatorWrites(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	release, err := localcluster.EnsureCamelK(ctx, os.Stderr)
	g.Expect(err).NotTo(HaveOccurred())
	data, err := os.ReadFile(filepath.Join(release.CRDs, "camel.apache.org_integrations.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	theirs := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(yaml.Unmarshal(data, theirs)).To(Succeed())

	current := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: theirs.Name}, current)).To(Succeed())
	camelK := current.DeepCopy()
	camelK.Labels = map[string]string{"app": "camel-k"}
	camelK.Spec = theirs.Spec
	g.Expect(env.Client.Update(ctx, camelK, client.FieldOwner("kamel"))).To(Succeed())
	t.Cleanup(func() { restoreCRD(t, theirs.Name) })

	ours, err := crd.CustomResourceDefinitions()
	g.Expect(err).NotTo(HaveOccurred())
	var out bytes.Buffer
	installer := &install.Installer{Client: env.Client, Out: &out}
	g.Expect(installer.Check(ctx, install.Config{ID: "crd-probe", Namespace: "default"}, false)).To(Succeed())
	var objs []client.Object
	for _, d := range ours {
		if d.Name == theirs.Name {
			objs = append(objs, d)
		}
	}
	g.Expect(installer.Install(ctx, "default", objs)).To(Succeed())
	g.Expect(out.String()).To(ContainSubstring("CustomResourceDefinition integrations.camel.apache.org was Camel K's (written by kamel): Caravan's schema now serves it"))

	ns := env.Namespace(t)
	g.Expect(roundTripCamelKStatus(ctx, ns, "after-install")).To(Succeed())
}

// TestCaravansCRDKeepsTheStatusCamelKsOperatorWrites: on Caravan's own CRD, a status that Camel
// K's operator writes keeps every field.
func TestCaravansCRDKeepsTheStatusCamelKsOperatorWrites(t *testing.T) {
	g := NewWithT(t)
	g.Expect(roundTripCamelKStatus(context.Background(), env.Namespace(t), "from-camel-k")).To(Succeed())
}

// roundTripCamelKStatus creates Integration name and writes the status Camel K's operator writes
// for a running integration: its catalog, its traits, conditions with its timestamps and without
// a message. It fails unless the status reads back unchanged.
func roundTripCamelKStatus(ctx context.Context, ns, name string) error {
	it := &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
		Annotations: map[string]string{camelv1.OperatorIDAnnotation: "camel-k"}}}
	if err := env.Client.Create(ctx, it); err != nil {
		return err
	}
	status := map[string]any{
		"phase":   "Running",
		"digest":  "vYdYvdqn9GAQrKz2SMtNfpkpuBUvFfMChqBvtg8m-pg8",
		"catalog": map[string]any{"version": "3.15.3", "runtimeProvider": "quarkus"},
		"traits":  map[string]any{"container": map[string]any{"image": "quay.io/acme/route:1"}},
		"integrationKit": map[string]any{"apiVersion": "camel.apache.org/v1", "kind": "IntegrationKit",
			"name": "kit-d4q2", "namespace": ns, "uid": "7c1f"},
		"version": "2.10.1", "runtimeVersion": "3.15.3", "runtimeProvider": "quarkus",
		"conditions": []any{
			map[string]any{"type": "Ready", "status": "True", "reason": "DeploymentReady", "message": "1/1 ready replicas",
				"lastUpdateTime": "2026-12-06T09:00:00Z", "lastTransitionTime": "2026-12-06T09:00:00Z",
				"firstTruthyTime": "2026-12-06T09:00:00Z"},
			map[string]any{"type": "CamelTraitInfo", "status": "True", "reason": "TraitConfiguration",
				"lastUpdateTime": "2026-12-06T09:00:00Z"},
		},
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(camelv1.GroupVersion.WithKind("Integration"))
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(it), u); err != nil {
		return err
	}
	u.Object["status"] = status
	if err := env.Client.Status().Update(ctx, u, client.FieldOwner("camel-k-operator")); err != nil {
		return err
	}
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(u.GroupVersionKind())
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(it), stored); err != nil {
		return err
	}
	if !reflect.DeepEqual(stored.Object["status"], status) {
		return fmt.Errorf("the status Camel K's operator wrote reads back as %v", stored.Object["status"])
	}
	return nil
}

// restoreCRD puts Caravan's CRD name back exactly as Caravan's install makes it.
func restoreCRD(t *testing.T, name string) {
	ctx := context.Background()
	ours, err := crd.CustomResourceDefinitions()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ours {
		if d.Name != name {
			continue
		}
		current := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, current); err != nil {
			t.Fatal(err)
		}
		d.ResourceVersion = current.ResourceVersion
		if err := env.Client.Update(ctx, d, client.FieldOwner(install.FieldManager)); err != nil {
			t.Fatal(err)
		}
	}
	if err := install.ApplyCRDs(ctx, env.Client); err != nil {
		t.Fatal(err)
	}
}
