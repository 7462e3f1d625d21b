// Package install puts Caravan's objects on a cluster.
package install

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/config/crd"
	"github.com/caravan-dev/caravan/internal/apply"
)

// FieldManager is the server-side apply field manager of everything the
// caravan CLI installs.
const FieldManager = "caravan"

// ApplyCRDs installs or updates Caravan's CustomResourceDefinitions with
// server-side apply and waits until the API server serves all of them.
func ApplyCRDs(ctx context.Context, c client.Client) error {
	crds, err := crd.CustomResourceDefinitions()
	if err != nil {
		return err
	}
	for _, d := range crds {
		d.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		obj, err := apply.Configuration(d)
		if err != nil {
			return err
		}
		if err := c.Apply(ctx, obj, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying CustomResourceDefinition %s: %w", d.Name, err)
		}
	}
	for _, d := range crds {
		if err := waitEstablished(ctx, c, d.Name); err != nil {
			return err
		}
	}
	return nil
}

func waitEstablished(ctx context.Context, c client.Client, name string) error {
	var last *apiextensionsv1.CustomResourceDefinition
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		d := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, d); err != nil {
			return false, nil
		}
		last = d
		for _, cond := range d.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		msg := "no status yet"
		if last != nil {
			for _, cond := range last.Status.Conditions {
				if cond.Type == apiextensionsv1.NamesAccepted && cond.Status != apiextensionsv1.ConditionTrue {
					msg = cond.Message
				}
			}
		}
		return fmt.Errorf("CustomResourceDefinition %s is not established: %s", name, msg)
	}
	return nil
}
