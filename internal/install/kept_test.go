package install_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	corev1 "k8s.io/api/core/v1"

	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/procnode"
)

// TestTheMavenCacheClaimIsKeptByTheLocalCluster: the claim caravan install makes for Maven's
// cache carries the annotation by which the local cluster's node keeps it across clusters.
func TestTheMavenCacheClaimIsKeptByTheLocalCluster(t *testing.T) {
	objs, err := install.Manifests(install.Config{ID: "tenant-a", Namespace: "ops", Image: "img", MavenCache: resource.NewQuantity(1<<30, resource.BinarySI)})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if claim, ok := o.(*corev1.PersistentVolumeClaim); ok {
			if claim.Annotations[procnode.KeptAnnotation] != "true" {
				t.Fatalf("the Maven cache claim is not marked %s: %v", procnode.KeptAnnotation, claim.Annotations)
			}
			return
		}
	}
	t.Fatal("no Maven cache claim")
}
