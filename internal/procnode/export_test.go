package procnode

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

// PullWithSecrets pulls ref into dir as a pod whose image pull secrets are secrets would.
func PullWithSecrets(ctx context.Context, dir, ref string, secrets []*corev1.Secret) (digest string, err error) {
	img, err := (&imageStore{dir: dir}).pull(ctx, ref, registryAuthOf(ref, secrets))
	return img.Digest, err
}
