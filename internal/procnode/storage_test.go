package procnode

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

func TestAClaimedVolumeIsADirectoryOfTheNodeThatOnlyItMounts(t *testing.T) {
	dir := t.TempDir()
	p := pathProvisioner{dir: filepath.Join(dir, "volumes"), node: "process-node"}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: "ops"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	pv, state, err := p.Provision(context.Background(), controller.ProvisionOptions{PVName: "pvc-1", PVC: claim,
		StorageClass: &storagev1.StorageClass{}})
	if err != nil || state != controller.ProvisioningFinished {
		t.Fatalf("Provision: %v, %v", state, err)
	}
	path := filepath.Join(dir, "volumes", "pvc-1")
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o777 {
		t.Fatalf("the volume's directory: %v, %v", info, err)
	}
	if pv.Spec.HostPath == nil || pv.Spec.HostPath.Path != path || pv.Spec.Capacity.Storage().String() != "1Gi" ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		t.Fatalf("the volume: %+v", pv.Spec)
	}
	term := pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0]
	if term.Key != "kubernetes.io/hostname" || term.Values[0] != "process-node" {
		t.Fatalf("the volume can be mounted by %+v", term)
	}

	outside := pv.DeepCopy()
	outside.Spec.HostPath.Path = dir
	if err := p.Delete(context.Background(), outside); err == nil {
		t.Fatal("a volume outside the node's volumes was deleted")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the refused delete removed %s: %v", dir, err)
	}
	if err := p.Delete(context.Background(), pv); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the deleted volume's directory: %v", err)
	}
}

func TestAClaimMarkedKeptLivesOutsideTheCluster(t *testing.T) {
	dir := t.TempDir()
	p := pathProvisioner{dir: filepath.Join(dir, "cluster", "volumes"), kept: filepath.Join(dir, "cache", "volumes"), node: "process-node"}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "tenant-a-operator-maven", Namespace: "ops",
		Annotations: map[string]string{KeptAnnotation: "true"}},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	pv, _, err := p.Provision(context.Background(), controller.ProvisionOptions{PVName: "pvc-2", PVC: claim, StorageClass: &storagev1.StorageClass{}})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "cache", "volumes", "tenant-a-operator-maven")
	if pv.Spec.HostPath.Path != want {
		t.Fatalf("the kept volume is at %s, want %s", pv.Spec.HostPath.Path, want)
	}
	if err := os.WriteFile(filepath.Join(want, "jar"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log("the next cluster's claim of that name finds what the first left")
	again, _, err := p.Provision(context.Background(), controller.ProvisionOptions{PVName: "pvc-3", PVC: claim, StorageClass: &storagev1.StorageClass{}})
	if err != nil || again.Spec.HostPath.Path != want {
		t.Fatalf("%v, %v", again.Spec.HostPath, err)
	}
	if _, err := os.Stat(filepath.Join(want, "jar")); err != nil {
		t.Fatalf("the kept volume lost its file: %v", err)
	}
	t.Log("deleting it removes it; without a place for kept volumes a marked claim lives in the cluster")
	if err := p.Delete(context.Background(), again); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(want); !os.IsNotExist(err) {
		t.Fatalf("the deleted volume is still there: %v", err)
	}
	p.kept = ""
	inCluster, _, err := p.Provision(context.Background(), controller.ProvisionOptions{PVName: "pvc-4", PVC: claim, StorageClass: &storagev1.StorageClass{}})
	if err != nil || inCluster.Spec.HostPath.Path != filepath.Join(dir, "cluster", "volumes", "pvc-4") {
		t.Fatalf("%v, %v", inCluster.Spec.HostPath, err)
	}
}
