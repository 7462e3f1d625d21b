package harness

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/caravan-dev/caravan/internal/render"
)

//go:embed testdata/podmonitor-crd.yaml
var podMonitorCRD []byte

// servePodMonitors creates the Prometheus Operator's PodMonitor kind and waits until discovery
// lists it. Its CustomResourceDefinition is reduced to its names; an operator that starts
// afterwards finds the kind served.
func (e *Env) servePodMonitors(ctx context.Context) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(podMonitorCRD, crd); err != nil {
		return err
	}
	if err := client.IgnoreAlreadyExists(e.Client.Create(ctx, crd)); err != nil {
		return fmt.Errorf("creating the PodMonitor kind: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(e.Config)
	if err != nil {
		return err
	}
	gv := render.PodMonitorGVK.GroupVersion().String()
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		resources, err := dc.ServerResourcesForGroupVersion(gv)
		return err == nil && len(resources.APIResources) > 0, nil
	})
	if err != nil {
		return fmt.Errorf("the API server does not serve %s: %w", gv, err)
	}
	return nil
}
