package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/internal/packaging"
)

// TestAnOperatorInstalledFromTheKustomizeBaseRunsIntegrations: an overlay
// of the kustomize base, as a user writes one (the image built from this
// tree, no admission policies, which the tenancy tests cover), applied
// with kubectl apply -k, runs the default operator camel-k, which runs an
// integration.
func TestAnOperatorInstalledFromTheKustomizeBaseRunsIntegrations(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	admin := env.Kubeconfig(t, "admin", "system:masters")
	apps := env.Namespace(t)
	base, err := filepath.Abs(filepath.Join(sourceRoot(), packaging.KustomizeDir, "overlays", "without-admission"))
	g.Expect(err).NotTo(HaveOccurred())
	img := env.OperatorImage(t)
	name, digest, _ := strings.Cut(img, "@")
	overlay := t.TempDir()
	// kustomize takes the bases of an overlay by relative path only.
	base, err = filepath.Rel(overlay, base)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - `+base+`
images:
  - name: caravan/operator
    newName: `+name+`
    digest: `+digest+`
`), 0o644)).To(Succeed())

	uninstallOnCleanup(t, admin, "camel-k", "camel-k")
	t.Cleanup(func() { _ = env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "camel-k"}}) })
	out, err := kubectl(t, "apply", "--server-side", "-k", overlay)
	g.Expect(err).NotTo(HaveOccurred(), out)

	pod := runningPod(t, "camel-k", "camel-k")
	g.Expect(pod.Spec.Containers[0].Image).To(Equal(img))
	it := newIntegration(apps, "from-kustomize", "camel-k", 1)
	create(t, it)
	waitRunningUnder(t, client.ObjectKeyFromObject(it), "camel-k")
}
