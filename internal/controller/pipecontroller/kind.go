package pipecontroller

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
)

// Kind is one of the two binding kinds the reconciler serves. Pipe and
// KameletBinding share their spec and status types; Kind gives the
// reconciler access to them without caring which one it holds.
type Kind struct {
	// GVK is the kind's group, version and kind, as in owner references.
	GVK schema.GroupVersionKind
	// New returns an empty object of the kind.
	New func() client.Object
	// NewList returns an empty list of the kind.
	NewList func() client.ObjectList
	// Parts returns the spec and status of an object of the kind.
	Parts func(client.Object) (*camelv1.PipeSpec, *camelv1.PipeStatus)
}

// Pipe is the v1 kind.
var Pipe = Kind{
	GVK:     camelv1.GroupVersion.WithKind("Pipe"),
	New:     func() client.Object { return &camelv1.Pipe{} },
	NewList: func() client.ObjectList { return &camelv1.PipeList{} },
	Parts: func(o client.Object) (*camelv1.PipeSpec, *camelv1.PipeStatus) {
		p := o.(*camelv1.Pipe)
		return &p.Spec, &p.Status
	},
}

// KameletBinding is the v1alpha1 kind, the older name of Pipe.
var KameletBinding = Kind{
	GVK:     camelv1alpha1.GroupVersion.WithKind("KameletBinding"),
	New:     func() client.Object { return &camelv1alpha1.KameletBinding{} },
	NewList: func() client.ObjectList { return &camelv1alpha1.KameletBindingList{} },
	Parts: func(o client.Object) (*camelv1.PipeSpec, *camelv1.PipeStatus) {
		b := o.(*camelv1alpha1.KameletBinding)
		return &b.Spec, &b.Status
	},
}
