// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/caravan-dev/caravan/internal/runtime"
)

// Mount is the mount trait: it mounts ConfigMaps, Secrets, PersistentVolumeClaims and
// empty directories in the main container. ConfigMaps and Secrets are configurations
// (mount.configs) or resources (mount.resources); claims are mount.volumes and empty
// directories mount.emptyDirs. Each is a volume of the pod mounted read-only, except
// claims and empty directories, which it may write. With mount.hotReload the pods roll when
// a mounted ConfigMap or Secret labelled camel.apache.org/integration changes. With enabled:
// false it reads as defaults.
type Mount struct {
	volumes   []MountedVolume
	hotReload bool
}

// A Store is a ConfigMap or a Secret the mount trait mounts.
type Store struct {
	// Kind is ConfigMap or Secret.
	Kind string
	// Name is its name, in the integration's namespace.
	Name string
}

// A MountedVolume is a volume of the pod and where the main container mounts it.
type MountedVolume struct {
	Volume corev1.Volume
	Mount  corev1.VolumeMount
	// config tells that it is one of mount.configs, which the runtime reads properties from.
	config bool
}

// Store is the ConfigMap or Secret the volume mounts; ok is false for other volumes.
func (mv MountedVolume) Store() (store Store, ok bool) {
	switch v := mv.Volume.VolumeSource; {
	case v.ConfigMap != nil:
		return Store{Kind: "ConfigMap", Name: v.ConfigMap.Name}, true
	case v.Secret != nil:
		return Store{Kind: "Secret", Name: v.Secret.SecretName}, true
	}
	return Store{}, false
}

// Dir is the directory that holds the volume's files: its mount path, or the directory of
// the one file it mounts.
func (mv MountedVolume) Dir() string {
	if mv.Mount.SubPath != "" {
		return path.Dir(mv.Mount.MountPath)
	}
	return mv.Mount.MountPath
}

// Volumes are the volumes to add, in the order written: configs, resources, volumes,
// then empty directories.
func (m Mount) Volumes() []MountedVolume { return slices.Clone(m.volumes) }

// HotReload tells whether mount.hotReload is on: a change of a mounted store rolls the pods.
func (m Mount) HotReload() bool { return m.hotReload }

// Stores are the ConfigMaps and Secrets mounted, in order, without duplicates.
func (m Mount) Stores() []Store {
	var stores []Store
	for _, mv := range m.volumes {
		if st, ok := mv.Store(); ok && !slices.Contains(stores, st) {
			stores = append(stores, st)
		}
	}
	return stores
}

// ConfigDirs are the directories of mount.configs, in order, without duplicates.
func (m Mount) ConfigDirs() []string {
	var dirs []string
	for _, mv := range m.volumes {
		if mv.config && !slices.Contains(dirs, mv.Dir()) {
			dirs = append(dirs, mv.Dir())
		}
	}
	return dirs
}

func parseMount(o *object) Mount {
	if o.disabled() {
		return Mount{}
	}
	var m Mount
	if hot := o.boolean("hotReload"); hot != nil {
		m.hotReload = *hot
	}
	mounted := map[string]bool{}
	add := func(key string, i int, entry string, mv MountedVolume, err error) {
		switch {
		case err != nil:
			o.failItem(key, i, err.Error(), entry)
		case mounted[mv.Mount.MountPath]:
			o.failItem(key, i, "must not mount at "+mv.Mount.MountPath+", where another entry mounts", entry)
		default:
			mounted[mv.Mount.MountPath] = true
			m.volumes = append(m.volumes, mv)
		}
	}
	for i, e := range o.strs("configs") {
		mv, err := storeVolume("config", e, false)
		mv.config = true
		add("configs", i, e, mv, err)
	}
	for i, e := range o.strs("resources") {
		mv, err := storeVolume("resource", e, true)
		add("resources", i, e, mv, err)
	}
	for i, e := range o.strs("volumes") {
		mv, err := claimVolume(e)
		add("volumes", i, e, mv, err)
	}
	for i, e := range o.strs("emptyDirs") {
		mv, err := emptyDirVolume(e)
		add("emptyDirs", i, e, mv, err)
	}
	return m
}

// storeVolume reads configmap:NAME[/KEY] or secret:NAME[/KEY], and for a resource an
// optional @PATH where it is mounted instead of its default directory. With a KEY only
// that key is mounted, as a file named by it.
func storeVolume(use, entry string, pathAllowed bool) (MountedVolume, error) {
	syntax := "must be configmap:NAME[/KEY] or secret:NAME[/KEY]"
	if pathAllowed {
		syntax = "must be configmap:NAME[/KEY][@PATH] or secret:NAME[/KEY][@PATH]"
	}
	kind, rest, ok := strings.Cut(entry, ":")
	if !ok || (kind != "configmap" && kind != "secret") {
		return MountedVolume{}, errors.New(syntax)
	}
	ref, mountPath, hasPath := strings.Cut(rest, "@")
	if hasPath && !pathAllowed {
		return MountedVolume{}, fmt.Errorf("%s: a configuration is mounted where the runtime reads it, with no @PATH", syntax)
	}
	name, key, hasKey := strings.Cut(ref, "/")
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return MountedVolume{}, fmt.Errorf("%s: %q is not a valid name: %s", syntax, name, strings.Join(errs, "; "))
	}
	if hasKey {
		if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
			return MountedVolume{}, fmt.Errorf("%s: %q is not a valid key: %s", syntax, key, strings.Join(errs, "; "))
		}
	}
	dir := map[string]string{
		"config/configmap": runtime.ConfigConfigMapsDir, "config/secret": runtime.ConfigSecretsDir,
		"resource/configmap": runtime.ResourceConfigMapsDir, "resource/secret": runtime.ResourceSecretsDir,
	}[use+"/"+kind] + "/" + name
	if hasPath {
		if err := checkPath(mountPath); err != nil {
			return MountedVolume{}, fmt.Errorf("%s: %w", syntax, err)
		}
		dir = mountPath
	}
	mv := MountedVolume{
		Volume: corev1.Volume{Name: volumeName(use+"-"+kind, entry)},
		Mount:  corev1.VolumeMount{MountPath: dir, ReadOnly: true},
	}
	var items []corev1.KeyToPath
	if hasKey {
		items = []corev1.KeyToPath{{Key: key, Path: key}}
		if !hasPath {
			mv.Mount.MountPath = dir + "/" + key
		}
		mv.Mount.SubPath = key
	}
	if kind == "configmap" {
		mv.Volume.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Items: items}
	} else {
		mv.Volume.Secret = &corev1.SecretVolumeSource{SecretName: name, Items: items}
	}
	mv.Mount.Name = mv.Volume.Name
	return mv, nil
}

// claimVolume reads CLAIM:PATH, a PersistentVolumeClaim mounted at PATH.
func claimVolume(entry string) (MountedVolume, error) {
	const syntax = "must be CLAIM:PATH, a PersistentVolumeClaim and an absolute path"
	claim, mountPath, ok := strings.Cut(entry, ":")
	if !ok {
		return MountedVolume{}, errors.New(syntax)
	}
	if errs := validation.IsDNS1123Subdomain(claim); len(errs) > 0 {
		return MountedVolume{}, fmt.Errorf("%s: %q is not a valid claim name: %s", syntax, claim, strings.Join(errs, "; "))
	}
	if err := checkPath(mountPath); err != nil {
		return MountedVolume{}, fmt.Errorf("%s: %w", syntax, err)
	}
	name := volumeName("volume", entry)
	return MountedVolume{
		Volume: corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}},
		Mount: corev1.VolumeMount{Name: name, MountPath: mountPath},
	}, nil
}

// emptyDirVolume reads NAME:PATH, an empty directory mounted at PATH.
func emptyDirVolume(entry string) (MountedVolume, error) {
	const syntax = "must be NAME:PATH, a volume name and an absolute path"
	name, mountPath, ok := strings.Cut(entry, ":")
	if !ok || len(validation.IsDNS1123Label(name)) > 0 {
		return MountedVolume{}, errors.New(syntax)
	}
	if err := checkPath(mountPath); err != nil {
		return MountedVolume{}, fmt.Errorf("%s: %w", syntax, err)
	}
	vol := volumeName("empty", entry)
	return MountedVolume{
		Volume: corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		Mount:  corev1.VolumeMount{Name: vol, MountPath: mountPath},
	}, nil
}

// checkPath refuses a mount path that is not absolute and clean, or that would hide
// what the operator mounts: the sources and the properties file.
func checkPath(p string) error {
	switch {
	case !path.IsAbs(p) || path.Clean(p) != p:
		return fmt.Errorf("%q is not a clean absolute path", p)
	case p == runtime.CamelDir || strings.HasPrefix(p, runtime.SourcesDir) || p == runtime.PropertiesPath:
		return fmt.Errorf("%q would hide the sources or the properties the operator mounts", p)
	}
	return nil
}

// volumeName is a volume name for an entry of the mount trait: the prefix and a short
// hash of the entry, so that two entries never share a volume.
func volumeName(prefix, entry string) string {
	sum := sha256.Sum256([]byte(entry))
	return "mount-" + prefix + "-" + hex.EncodeToString(sum[:])[:10]
}
