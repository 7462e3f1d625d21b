package api_test

import (
	"context"
	"io"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/config/crd"
	"github.com/caravan-dev/caravan/internal/install"
)

// TestAnInstallRefusesToReplaceAnotherInstallersCRD: a CRD of Caravan's
// names that is not labelled as Caravan's (as Camel K's are) makes the
// install check fail, naming who wrote it; --force takes it over.
func TestAnInstallRefusesToReplaceAnotherInstallersCRD(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	d := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "builds.camel.apache.org"}, d)).To(Succeed())
	g.Expect(d.Labels).To(HaveKeyWithValue(crd.PartOfLabel, crd.PartOf))
	foreign := d.DeepCopy()
	delete(foreign.Labels, crd.PartOfLabel)
	foreign.Labels["app"] = "camel-k"
	g.Expect(env.Client.Patch(ctx, foreign, client.MergeFrom(d), client.FieldOwner("kamel"))).To(Succeed())
	t.Cleanup(func() {
		g.Expect(install.ApplyCRDs(ctx, env.Client)).To(Succeed())
	})

	installer := &install.Installer{Client: env.Client, Out: io.Discard}
	c := install.Config{ID: "crd-probe", Namespace: "default"}
	err := installer.Check(ctx, c, false)
	g.Expect(err).To(MatchError(And(
		ContainSubstring("CustomResourceDefinition builds.camel.apache.org exists and is not Caravan's"),
		ContainSubstring("kamel"), ContainSubstring("--force"))))
	g.Expect(installer.Check(ctx, c, true)).To(Succeed())
}
