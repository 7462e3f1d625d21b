package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// CLI runs the caravan binary Env.Caravan against the test cluster as kubeconfig's user.
// The test cluster is "the local cluster" to it, so that an install pushes this tree's operator
// image to the cluster's registry and its operators run as processes of the cluster's node.
func (e *Env) CLI(t testing.TB, kubeconfig string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	if e.Caravan == "" {
		return "", "", errors.New("the harness has no caravan binary: start it with Options.BuildCaravan")
	}
	var out, errOut bytes.Buffer
	cmd := exec.Command(e.Caravan, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "CARAVAN_LOCAL_DIR="+e.Cluster.Dir)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// RunningUnder checks that the integration is Running, owned by id, and that its Deployment is
// that operator's, with all its pods updated and ready.
func (e *Env) RunningUnder(key client.ObjectKey, id string) error {
	ctx := context.Background()
	it := &camelv1.Integration{}
	if err := e.Client.Get(ctx, key, it); err != nil {
		return err
	}
	if it.Status.Phase != camelv1.IntegrationPhaseRunning || it.Status.Ownership.Owner != id {
		return fmt.Errorf("integration %s: phase %q, owner %q, conditions %v", key, it.Status.Phase, it.Status.Ownership.Owner, it.Status.Conditions)
	}
	d := &appsv1.Deployment{}
	if err := e.Client.Get(ctx, key, d); err != nil {
		return err
	}
	if d.Labels[camelv1.OperatorIDLabel] != id {
		return fmt.Errorf("deployment %s is labelled for %q", key, d.Labels[camelv1.OperatorIDLabel])
	}
	want := int32(1)
	if it.Spec.Replicas != nil {
		want = *it.Spec.Replicas
	}
	if d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas != want || d.Status.ReadyReplicas != want {
		return fmt.Errorf("deployment %s: %d updated, %d ready of %d", key, d.Status.UpdatedReplicas, d.Status.ReadyReplicas, want)
	}
	return nil
}
