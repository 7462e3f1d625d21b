package harness

import (
	"context"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// UsePlatformRegistry points the platform of operator id (the
// IntegrationPlatform id in namespace, which the operator makes at start)
// at registry, with baseImage as the kits' base, waiting up to a minute
// for the platform to exist.
func (e *Env) UsePlatformRegistry(t testing.TB, namespace, id string, registry camelv1.RegistrySpec, baseImage string) {
	t.Helper()
	ctx := context.Background()
	itp := &camelv1.IntegrationPlatform{}
	key := client.ObjectKey{Namespace: namespace, Name: id}
	deadline := time.Now().Add(time.Minute)
	for {
		err := e.Client.Get(ctx, key, itp)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the platform %s never appeared: %v", key, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	before := itp.DeepCopy()
	itp.Spec.Build.Registry = registry
	itp.Spec.Build.BaseImage = baseImage
	if err := e.Client.Patch(ctx, itp, client.MergeFrom(before)); err != nil {
		t.Fatalf("configuring the registry of platform %s: %v", key, err)
	}
}
