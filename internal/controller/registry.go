package controller

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/image"
)

// The reasons a platform's registry settings cannot work as they are, which the user must fix.
const (
	ReasonNoRegistry                Reason = "NoRegistry"
	ReasonRegistrySecretUnavailable Reason = "RegistrySecretUnavailable"
	ReasonRegistrySecretInvalid     Reason = "RegistrySecretInvalid"
	ReasonRegistryCAUnavailable     Reason = "RegistryCAUnavailable"
)

// RegistryAccess is how an operator reaches its platform's registry.
type RegistryAccess struct {
	// Registry is the registry, with its credentials and CA certificates.
	Registry image.Registry
	// Secret is the key of the credentials Secret, which builder pods mount; nil for none.
	Secret *corev1.SecretKeySelector
	// CA are the CA certificates as a volume of *.crt files, for builder pods; nil for none.
	CA *corev1.VolumeSource
}

// ReadRegistry reads what reaching the registry of operator operatorID's platform takes: the
// credentials Secret and the CA ConfigMap it names, in the operator's namespace. A condition is
// returned while the settings cannot work as they are; an error when reading fails otherwise.
func ReadRegistry(ctx context.Context, reader client.Reader, namespace, operatorID string, spec camelv1.RegistrySpec) (RegistryAccess, *Condition, error) {
	if spec.Address == "" {
		return RegistryAccess{}, Because(ReasonNoRegistry, fmt.Sprintf(
			"the IntegrationPlatform %s/%s has no spec.build.registry.address: kits cannot be built until it names a registry",
			namespace, operatorID)), nil
	}
	access := RegistryAccess{Registry: image.Registry{Address: spec.Address, Insecure: spec.Insecure, Organization: spec.Organization}}
	if spec.Secret != "" {
		secret := &corev1.Secret{}
		if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: spec.Secret}, secret); err != nil {
			return access, Because(ReasonRegistrySecretUnavailable, fmt.Sprintf("reading the registry Secret %s/%s named by the platform: %v",
				namespace, spec.Secret, err)), nil
		}
		key := corev1.DockerConfigJsonKey
		if secret.Data[key] == nil {
			key = corev1.DockerConfigKey
		}
		auth, err := image.AuthFromDockerConfig(secret.Data[key], spec.Address)
		if err != nil {
			return access, Because(ReasonRegistrySecretInvalid, fmt.Sprintf("registry Secret %s/%s: %v", namespace, spec.Secret, err)), nil
		}
		access.Registry.Auth = auth
		access.Secret = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: spec.Secret}, Key: key}
	}
	if spec.CA == "" {
		return access, nil, nil
	}
	pems, vol, cond, err := registryCA(ctx, reader, namespace, operatorID, spec.CA)
	access.Registry.CACertificates, access.CA = pems, vol
	return access, cond, err
}

// registryCA reads the CA certificates of the ConfigMap name, as Camel K's spec.build.registry.ca
// names one: every key holds PEM certificates. It returns them, and a volume of them as *.crt
// files for a builder pod. A condition is returned while the ConfigMap is missing or holds
// anything else.
func registryCA(ctx context.Context, reader client.Reader, namespace, operatorID, name string) ([]byte, *corev1.VolumeSource, *Condition, error) {
	cm := &corev1.ConfigMap{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cm)
	if apierrors.IsNotFound(err) || err == nil && len(cm.Data) == 0 {
		return nil, nil, Because(ReasonRegistryCAUnavailable, fmt.Sprintf(
			"the IntegrationPlatform %s/%s has kits pushed trusting the CA certificates of configmap/%s in namespace %s, which is not there or empty: "+
				"create it, or change spec.build.registry.ca", namespace, operatorID, name, namespace)), nil
	}
	if err != nil {
		return nil, nil, Because(ReasonRegistryCAUnavailable, fmt.Sprintf("reading configmap/%s in namespace %s, named by spec.build.registry.ca: %v",
			name, namespace, err)), nil
	}
	var pems []byte
	vol := &corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}
	for i, key := range slices.Sorted(maps.Keys(cm.Data)) {
		if err := PEMCertificates([]byte(cm.Data[key])); err != nil {
			return nil, nil, Because(ReasonRegistryCAUnavailable, fmt.Sprintf(
				"configmap/%s key %s in namespace %s, named by spec.build.registry.ca of the IntegrationPlatform %s/%s, %v",
				name, key, namespace, namespace, operatorID, err)), nil
		}
		pems = append(append(pems, cm.Data[key]...), '\n')
		vol.ConfigMap.Items = append(vol.ConfigMap.Items, corev1.KeyToPath{Key: key, Path: fmt.Sprintf("ca-%d.crt", i)})
	}
	return pems, vol, nil, nil
}

// PEMCertificates checks that data holds PEM certificates, and nothing else.
func PEMCertificates(data []byte) error {
	n := 0
	for rest := data; ; n++ {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			if len(bytes.TrimSpace(rest)) > 0 {
				return fmt.Errorf("holds something other than PEM certificates after certificate %d", n)
			}
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("block %d is a %s, not a CERTIFICATE", n+1, block.Type)
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("certificate %d: %w", n+1, err)
		}
	}
	if n == 0 {
		return errors.New("holds no PEM certificate")
	}
	return nil
}
