package operatorcmd

import (
	"testing"

	"k8s.io/client-go/rest"
)

// fixedKube is a cluster of a given namespace and client configuration.
type fixedKube struct{ cfg *rest.Config }

func (fixedKube) NamespaceFlag() string               { return "ops" }
func (fixedKube) Namespace() (string, error)          { return "ops", nil }
func (k fixedKube) RESTConfig() (*rest.Config, error) { return rest.CopyConfig(k.cfg), nil }

func TestTheOperatorAndTheFleetAskTheirAPIServerForUncompressedResponses(t *testing.T) {
	kube := fixedKube{cfg: &rest.Config{Host: "https://127.0.0.1:6443"}}
	op := &Options{Kube: kube, IDFlag: "tenant-a"}
	if err := op.Complete(); err != nil {
		t.Fatal(err)
	}
	if !op.config.DisableCompression || op.config.QPS != 300 || op.config.Burst != 600 {
		t.Errorf("the operator's client: compression disabled %t, QPS %v, burst %d; want true, 300, 600",
			op.config.DisableCompression, op.config.QPS, op.config.Burst)
	}
	fleet := &FleetOptions{Kube: kube}
	if err := fleet.Complete(); err != nil {
		t.Fatal(err)
	}
	if !fleet.config.DisableCompression {
		t.Error("the fleet's client asks for compressed responses")
	}
}
