package procnode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

// Storage of a process node: volumes are directories of the machine.
const (
	// StorageClass is the class whose claims the node provisions.
	StorageClass = "caravan-local"
	// Provisioner is StorageClass's provisioner name.
	Provisioner = "caravan.dev/process-node"
	// KeptAnnotation marks a claim whose volume the node keeps across clusters, by the claim's
	// name, when it has a place for kept volumes: Maven's cache, warm from one local cluster to
	// the next.
	KeptAnnotation = "caravan.dev/kept-across-clusters"
)

// pathProvisioner makes each claimed volume a directory under dir, as a
// hostPath PersistentVolume that only this node can mount.
type pathProvisioner struct {
	dir string
	// kept, when set, holds the volumes of claims annotated KeptAnnotation.
	kept string
	node string
}

var _ controller.Provisioner = pathProvisioner{}

// Provision creates the volume's directory and returns its PersistentVolume.
func (p pathProvisioner) Provision(_ context.Context, opts controller.ProvisionOptions) (*corev1.PersistentVolume, controller.ProvisioningState, error) {
	path := filepath.Join(p.dir, opts.PVName)
	if p.kept != "" && opts.PVC.Annotations[KeptAnnotation] == "true" {
		path = filepath.Join(p.kept, opts.PVC.Name)
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, controller.ProvisioningFinished, err
	}
	// Any container user writes, as in an emptyDir.
	if err := os.Chmod(path, 0o777); err != nil {
		return nil, controller.ProvisioningFinished, err
	}
	reclaim := corev1.PersistentVolumeReclaimDelete
	if opts.StorageClass.ReclaimPolicy != nil {
		reclaim = *opts.StorageClass.ReclaimPolicy
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: opts.PVName},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: reclaim,
			AccessModes:                   opts.PVC.Spec.AccessModes,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: opts.PVC.Spec.Resources.Requests[corev1.ResourceStorage]},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: path, Type: ptr.To(corev1.HostPathDirectory)},
			},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname",
					Operator: corev1.NodeSelectorOpIn, Values: []string{p.node}}}}}}},
		},
	}
	return pv, controller.ProvisioningFinished, nil
}

// Delete removes a released volume's directory.
func (p pathProvisioner) Delete(_ context.Context, pv *corev1.PersistentVolume) error {
	path, err := p.hostPath(pv)
	if err != nil {
		return err
	}
	return os.RemoveAll(path)
}

// hostPath returns where pv lives, refusing a path outside the node's volumes.
func (p pathProvisioner) hostPath(pv *corev1.PersistentVolume) (string, error) {
	if pv.Spec.HostPath == nil {
		return "", fmt.Errorf("PersistentVolume %s is no hostPath volume", pv.Name)
	}
	path := filepath.Clean(pv.Spec.HostPath.Path)
	for _, dir := range []string{p.dir, p.kept} {
		if dir != "" && strings.HasPrefix(path, filepath.Clean(dir)+string(filepath.Separator)) {
			return path, nil
		}
	}
	return "", fmt.Errorf("PersistentVolume %s lies outside this node's volumes (%s)", pv.Name, p.dir)
}

// runProvisioner provisions the claims of StorageClass until ctx ends.
func (n *Node) runProvisioner(ctx context.Context) {
	RunProvisioner(ctx, n.client, n.cfg.Name, filepath.Join(n.cfg.Dir, "volumes"), n.cfg.KeptVolumes)
}

// RunProvisioner provisions the claims of StorageClass as directories under dir (kept, when
// set, holds those of claims annotated KeptAnnotation), mounted as hostPath volumes on the
// node called node, until ctx ends. The kubelet node runs it beside its kubelet.
func RunProvisioner(ctx context.Context, cs kubernetes.Interface, node, dir, kept string) {
	p := pathProvisioner{dir: dir, kept: kept, node: node}
	controller.NewProvisionController(ctx, cs, Provisioner, p, controller.LeaderElection(false)).Run(ctx)
}

// claimPath returns the directory of the volume bound to a pod's claim.
func (w volumeWriter) claimPath(ctx context.Context, ns string, src *corev1.PersistentVolumeClaimVolumeSource) (string, error) {
	claim, err := w.client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, src.ClaimName, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("PersistentVolumeClaim %s: %w", src.ClaimName, err)
	}
	if claim.Status.Phase != corev1.ClaimBound || claim.Spec.VolumeName == "" {
		return "", fmt.Errorf("PersistentVolumeClaim %s is %s, not Bound", src.ClaimName, claim.Status.Phase)
	}
	pv, err := w.client.CoreV1().PersistentVolumes().Get(ctx, claim.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("PersistentVolume %s of claim %s: %w", claim.Spec.VolumeName, src.ClaimName, err)
	}
	switch {
	case pv.Spec.HostPath != nil:
		return pv.Spec.HostPath.Path, nil
	case pv.Spec.Local != nil:
		return pv.Spec.Local.Path, nil
	}
	return "", fmt.Errorf("PersistentVolume %s of claim %s: this node mounts hostPath and local volumes only", pv.Name, src.ClaimName)
}
