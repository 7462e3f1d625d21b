package procnode_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"

	"github.com/caravan-dev/caravan/internal/image/imagetest"
	"github.com/caravan-dev/caravan/internal/procnode"
)

func TestAnImageOfARegistryThatWantsCredentialsIsPulledWithThePodsPullSecret(t *testing.T) {
	reg := imagetest.StartRegistry(t, imagetest.WithAuth("puller", "s3cret"))
	ref := reg.Address + "/team/app:1"
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(parsed, img, remote.WithAuth(reg.Config().Auth)); err != nil {
		t.Fatalf("pushing the test image: %v", err)
	}
	dockerConfig := func(user, password string) *corev1.Secret {
		auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
		return &corev1.Secret{Data: map[string][]byte{corev1.DockerConfigJsonKey: fmt.Appendf(nil,
			`{"auths":{%q:{"auth":%q}}}`, reg.Address, auth)}}
	}
	other := &corev1.Secret{Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(
		`{"auths":{"elsewhere.example:5000":{"username":"x","password":"y"}}}`)}}
	dir := t.TempDir()

	if _, err := procnode.PullWithSecrets(context.Background(), dir, ref, []*corev1.Secret{other}); err == nil ||
		!strings.Contains(err.Error(), "UNAUTHORIZED") {
		t.Fatalf("pulled without credentials for the registry: %v", err)
	}
	digest, err := procnode.PullWithSecrets(context.Background(), dir, ref, []*corev1.Secret{other, dockerConfig("puller", "s3cret")})
	if err != nil {
		t.Fatalf("pulling with the second pull secret's credentials: %v", err)
	}
	if want, _ := img.Digest(); digest != want.String() {
		t.Errorf("pulled %s, pushed %s", digest, want)
	}
}
