// Package install puts Caravan's objects on a cluster.
package install

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/config/crd"
	"github.com/caravan-dev/caravan/internal/apply"
	"github.com/caravan-dev/caravan/internal/await"
)

// FieldManager is the server-side apply field manager of everything the
// caravan CLI installs.
const FieldManager = "caravan"

// ApplyCRDs installs or updates Caravan's CustomResourceDefinitions with
// server-side apply and waits until the API server serves all of them, watching each.
func ApplyCRDs(ctx context.Context, c client.WithWatch) error {
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

// waitEstablished watches the CustomResourceDefinition name until it is Established, for a
// minute at most.
func waitEstablished(ctx context.Context, c client.WithWatch, name string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	msg, established, err := await.Object(ctx, c, client.ObjectKey{Name: name}, &apiextensionsv1.CustomResourceDefinition{},
		func(d *apiextensionsv1.CustomResourceDefinition, err error) (bool, string, error) {
			if err != nil {
				return false, "no status yet", nil
			}
			return crdEstablished(d)
		})
	switch {
	case err != nil:
		return fmt.Errorf("waiting for CustomResourceDefinition %s to be established: %w", name, err)
	case !established:
		return fmt.Errorf("CustomResourceDefinition %s is not established: %s", name, msg)
	}
	return nil
}

// crdEstablished tells whether d is Established and, when it is not, why its names were not
// accepted, or "no status yet".
func crdEstablished(d *apiextensionsv1.CustomResourceDefinition) (bool, string, error) {
	msg := "no status yet"
	for _, cond := range d.Status.Conditions {
		switch {
		case cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue:
			return true, "", nil
		case cond.Type == apiextensionsv1.NamesAccepted && cond.Status != apiextensionsv1.ConditionTrue:
			msg = cond.Message
		}
	}
	return false, msg, nil
}
