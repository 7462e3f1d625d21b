package installcmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/cli/clitest"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/install"
)

func TestUninstallFindsTheNamespaceTheOperatorIsRegisteredTo(t *testing.T) {
	clitest.Create(t, &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: "uninst-a",
		Annotations: map[string]string{install.InstalledNamespaceAnnotation: "shared"}}})
	installer := &install.Installer{Client: clitest.Cluster(t).Client}
	find := func(id string, args ...string) (string, string, error) {
		kube := cmdutil.NewKubeFlags()
		if len(args) == 2 {
			*kube.ConfigFlags.Namespace = args[1]
		}
		var errOut bytes.Buffer
		o := &UninstallOptions{Cluster: cmdutil.Cluster{Kube: kube, Namespace: "default"}, ID: id, IOStreams: genericiooptions.IOStreams{ErrOut: &errOut}}
		if ns := kube.NamespaceFlag(); ns != "" {
			o.Namespace = ns
		}
		err := o.findOperator(context.Background(), installer)
		return o.Namespace, errOut.String(), err
	}
	ns, msg, err := find("uninst-a")
	if err != nil || ns != "shared" || !strings.Contains(msg, "operator uninst-a is registered to namespace shared: uninstalling it there") {
		t.Errorf("without -n: namespace %q, %q, %v", ns, msg, err)
	}
	if _, _, err := find("uninst-a", "-n", "ops"); err == nil || !strings.Contains(err.Error(), "registered to namespace shared, not ops: give -n shared") {
		t.Errorf("with another -n: %v", err)
	}
	if _, _, err := find("uninst-none"); err == nil || !strings.Contains(err.Error(), "operator uninst-none is not installed in namespace default") {
		t.Errorf("an operator that is nowhere: %v", err)
	}
}
