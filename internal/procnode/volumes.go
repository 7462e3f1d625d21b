package procnode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// volumeWriter makes a pod's volumes as directories of the node. It
// writes empty dirs, and the files of ConfigMap, Secret, downward API
// and projected volumes (the ServiceAccount token among them, bound to
// the pod). A claim's volume is its PersistentVolume's directory.
type volumeWriter struct {
	client kubernetes.Interface
}

// prepare creates every volume of pod under dir and returns their host
// paths by name. It refuses volume types the node cannot provide.
func (w volumeWriter) prepare(ctx context.Context, pod *corev1.Pod, dir string) (map[string]string, error) {
	paths := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			p, err := w.claimPath(ctx, pod.Namespace, v.PersistentVolumeClaim)
			if err != nil {
				return nil, fmt.Errorf("volume %s: %w", v.Name, err)
			}
			paths[v.Name] = p
			continue
		}
		p := filepath.Join(dir, v.Name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			return nil, err
		}
		var files map[string]file
		var err error
		switch {
		case v.EmptyDir != nil:
			err = os.Chmod(p, 0o777) // as a kubelet makes them: any container user writes
		case v.Projected != nil:
			files, err = w.projected(ctx, pod, v.Projected)
		case v.ConfigMap != nil:
			files, err = w.configMap(ctx, pod.Namespace, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional, v.ConfigMap.DefaultMode)
		case v.Secret != nil:
			files, err = w.secret(ctx, pod.Namespace, v.Secret.SecretName, v.Secret.Items, v.Secret.Optional, v.Secret.DefaultMode)
		case v.DownwardAPI != nil:
			files, err = downward(pod, v.DownwardAPI.Items, v.DownwardAPI.DefaultMode)
		default:
			err = fmt.Errorf("this node supports emptyDir, configMap, secret, downwardAPI, projected and persistentVolumeClaim volumes only")
		}
		if err != nil {
			return nil, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		if err := writeFiles(p, files); err != nil {
			return nil, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		paths[v.Name] = p
	}
	return paths, nil
}

// file is one file of a volume.
type file struct {
	data []byte
	mode os.FileMode
}

func modeOf(item, def *int32) os.FileMode {
	if item != nil {
		return os.FileMode(*item)
	}
	if def != nil {
		return os.FileMode(*def)
	}
	return 0o644
}

func (w volumeWriter) projected(ctx context.Context, pod *corev1.Pod, p *corev1.ProjectedVolumeSource) (map[string]file, error) {
	out := map[string]file{}
	add := func(files map[string]file, err error) error {
		for k, v := range files {
			out[k] = v
		}
		return err
	}
	for _, src := range p.Sources {
		var err error
		switch {
		case src.ServiceAccountToken != nil:
			err = add(w.token(ctx, pod, src.ServiceAccountToken, p.DefaultMode))
		case src.ConfigMap != nil:
			err = add(w.configMap(ctx, pod.Namespace, src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional, p.DefaultMode))
		case src.Secret != nil:
			err = add(w.secret(ctx, pod.Namespace, src.Secret.Name, src.Secret.Items, src.Secret.Optional, p.DefaultMode))
		case src.DownwardAPI != nil:
			err = add(downward(pod, src.DownwardAPI.Items, p.DefaultMode))
		default:
			err = fmt.Errorf("unsupported projected source")
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// token requests a ServiceAccount token bound to the pod, as a kubelet does.
func (w volumeWriter) token(ctx context.Context, pod *corev1.Pod, src *corev1.ServiceAccountTokenProjection, def *int32) (map[string]file, error) {
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: src.ExpirationSeconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	if src.Audience != "" {
		req.Spec.Audiences = []string{src.Audience}
	}
	if req.Spec.ExpirationSeconds == nil {
		req.Spec.ExpirationSeconds = ptr.To[int64](3600)
	}
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	tr, err := w.client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("requesting a token of ServiceAccount %s: %w", sa, err)
	}
	return map[string]file{src.Path: {data: []byte(tr.Status.Token), mode: modeOf(nil, def)}}, nil
}

func (w volumeWriter) configMap(ctx context.Context, ns, name string, items []corev1.KeyToPath, optional *bool, def *int32) (map[string]file, error) {
	cm, err := w.client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, optionalErr(optional, fmt.Errorf("ConfigMap %s: %w", name, err))
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return keyFiles(data, items, def, "ConfigMap "+name)
}

func (w volumeWriter) secret(ctx context.Context, ns, name string, items []corev1.KeyToPath, optional *bool, def *int32) (map[string]file, error) {
	s, err := w.client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, optionalErr(optional, fmt.Errorf("secret %s: %w", name, err))
	}
	return keyFiles(s.Data, items, def, "secret "+name)
}

// keyFiles maps data to files: every key, or the items' keys to their paths.
func keyFiles(data map[string][]byte, items []corev1.KeyToPath, def *int32, what string) (map[string]file, error) {
	out := map[string]file{}
	if len(items) == 0 {
		for k, v := range data {
			out[k] = file{data: v, mode: modeOf(nil, def)}
		}
		return out, nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			return nil, fmt.Errorf("%s has no key %s", what, it.Key)
		}
		out[it.Path] = file{data: v, mode: modeOf(it.Mode, def)}
	}
	return out, nil
}

func downward(pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile, def *int32) (map[string]file, error) {
	out := map[string]file{}
	for _, it := range items {
		if it.FieldRef == nil {
			return nil, fmt.Errorf("downward API file %s: only fieldRef is supported", it.Path)
		}
		v, err := fieldValue(pod, it.FieldRef.FieldPath)
		if err != nil {
			return nil, err
		}
		out[it.Path] = file{data: []byte(v), mode: modeOf(it.Mode, def)}
	}
	return out, nil
}

// writeFiles writes files under dir, each replaced atomically.
func writeFiles(dir string, files map[string]file) error {
	for rel, f := range files {
		p := filepath.Join(dir, filepath.Clean("/"+rel))
		if !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			return fmt.Errorf("path %q leaves the volume", rel)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		tmp := p + ".tmp"
		if err := os.WriteFile(tmp, f.data, f.mode); err != nil {
			return err
		}
		if err := os.Chmod(tmp, f.mode); err != nil {
			return err
		}
		if err := os.Rename(tmp, p); err != nil {
			return err
		}
	}
	return nil
}
