package runcmd

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/cli/clitest"
)

func TestKitGetListsAndKitDeleteDeletesOneOperatorsKits(t *testing.T) {
	ns := clitest.Cluster(t).Namespace(t)
	kit := func(name, id string) *camelv1.IntegrationKit {
		return &camelv1.IntegrationKit{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Annotations: map[string]string{camelv1.OperatorIDAnnotation: id}}}
	}
	clitest.Create(t, kit("kit-a1", "op-a"), kit("kit-a2", "op-a"), kit("kit-b1", "op-b"))
	kubeconfig := clitest.Cluster(t).Kubeconfig(t, "admin", "system:masters")
	caravan := func(args ...string) (string, error) {
		out, errOut, err := clitest.ExecMutateCommand(t, NewCmdKit, append(args, "--kubeconfig", kubeconfig, "-n", ns)...)
		return out + errOut, err
	}
	out, err := caravan("kit", "get")
	if err != nil || !strings.Contains(out, "kit-a1") || !strings.Contains(out, "kit-b1") {
		t.Fatalf("kit get: %v\n%s", err, out)
	}
	if _, err := caravan("kit", "delete", "kit-b1", "-x", "op-a"); err == nil || !strings.Contains(err.Error(), `kit "kit-b1" is assigned to op-b, not op-a`) {
		t.Errorf("deleting another operator's kit by name: %v", err)
	}
	if _, err := caravan("kit", "delete"); err == nil || !strings.Contains(err.Error(), "give the names of the kits to delete, or --all") {
		t.Errorf("kit delete without names: %v", err)
	}
	out, err = caravan("kit", "delete", "--all", "-x", "op-a")
	if err != nil || strings.Count(out, "deleted") != 2 {
		t.Fatalf("kit delete --all -x op-a: %v\n%s", err, out)
	}
	for name, gone := range map[string]bool{"kit-a1": true, "kit-a2": true, "kit-b1": false} {
		err := clitest.Cluster(t).Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &camelv1.IntegrationKit{})
		if apierrors.IsNotFound(err) != gone {
			t.Errorf("%s: gone %v, want %v (%v)", name, apierrors.IsNotFound(err), gone, err)
		}
	}
}
