package harness

import (
	"context"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// UsePlatformRegistry points the platform of operator id at registry, and waits until the
// operator has seen it. The platform is the IntegrationPlatform id in namespace, which the
// operator makes at start; it gets baseImage as the kits' base and the dependency-list build strategy
// (an operator of the test process runs no builder pods). The wait, up to a minute, is for
// the platform to exist and then for its status to observe its generation: a build the test
// starts afterwards uses this registry, not the one before.
func (e *Env) UsePlatformRegistry(t testing.TB, namespace, id string, registry camelv1.RegistrySpec, baseImage string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	itp := &camelv1.IntegrationPlatform{}
	key := client.ObjectKey{Namespace: namespace, Name: id}
	var lastErr error
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		lastErr = e.Client.Get(ctx, key, itp)
		return lastErr == nil, nil
	})
	if err != nil {
		t.Fatalf("the platform %s never appeared: %v", key, lastErr)
	}
	before := itp.DeepCopy()
	itp.Spec.Build.Registry = registry
	itp.Spec.Build.BaseImage = baseImage
	itp.Spec.Build.BuildConfiguration = &camelv1.RawObject{JSON: apiextensionsv1.JSON{Raw: []byte(`{"strategy":"dependency-list"}`)}}
	if err := e.Client.Patch(ctx, itp, client.MergeFrom(before)); err != nil {
		t.Fatalf("configuring the registry of platform %s: %v", key, err)
	}
	generation := itp.Generation
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		lastErr = e.Client.Get(ctx, key, itp)
		return lastErr == nil && itp.Status.ObservedGeneration >= generation, nil
	})
	if err != nil {
		t.Fatalf("the operator never observed generation %d of the platform %s (observed %d, error %v)",
			generation, key, itp.Status.ObservedGeneration, lastErr)
	}
}
