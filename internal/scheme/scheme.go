// Package scheme builds the runtime scheme that Caravan's clients use:
// Kubernetes' built-in kinds, CustomResourceDefinitions and the
// camel.apache.org kinds.
package scheme

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
)

// New returns a scheme with every kind Caravan reads or writes.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(camelv1.AddToScheme(s))
	utilruntime.Must(camelv1alpha1.AddToScheme(s))
	return s
}
