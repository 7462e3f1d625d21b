package cli

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/internal/scheme"
	"github.com/caravan-dev/caravan/test/harness"
)

// cluster is the API server (with etcd and Caravan's CRDs) that the
// commands' tests run against, started by the first test that asks for it
// and stopped after the last; the package's pure tests run without it.
// The control plane has no controllers: a deleted namespace keeps its
// objects, so create removes what it creates when the test ends. Tests
// that create objects do not run in parallel: cluster-scoped
// IntegrationOperators have the same names in several tests, and -A lists
// every namespace.
func cluster(t testing.TB) *harness.Env {
	t.Helper()
	clusterOnce.Do(func() {
		clusterEnv, clusterErr = harness.Start(context.Background(), harness.Options{})
	})
	if clusterErr != nil {
		t.Fatalf("starting the test control plane: %v", clusterErr)
	}
	return clusterEnv
}

var (
	clusterOnce sync.Once
	clusterEnv  *harness.Env
	clusterErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if clusterEnv != nil {
		if err := clusterEnv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the test control plane:", err)
			code = max(code, 1)
		}
	}
	os.Exit(code)
}

// watchClient is an administrator client of env that can also watch, as
// the commands that wait need.
func watchClient(t *testing.T) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(cluster(t).Config, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// create creates objs on the API server, then writes the status they
// carry (a create drops it), and deletes them when the test ends. Each
// object is updated with what the server returned.
func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	ctx := context.Background()
	for _, obj := range objs {
		want, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		if err := cluster(t).Client.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
		}
		t.Cleanup(func() {
			if err := cluster(t).Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
			}
		})
		status, _ := want["status"].(map[string]any)
		if len(status) == 0 {
			continue
		}
		created, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		created["status"] = status
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(created, obj); err != nil {
			t.Fatal(err)
		}
		if err := cluster(t).Client.Status().Update(ctx, obj); err != nil {
			t.Fatalf("writing the status of %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
		}
	}
}
