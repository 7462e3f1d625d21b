package integrationcontroller

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/controller"
)

// +kubebuilder:rbac:groups=camel.apache.org,resources=integrationprofiles,verbs=get;list;watch

// profileRetry is how soon an integration whose IntegrationProfile is missing looks again: the
// operator watches profiles only in the namespaces it watches.
const profileRetry = 30 * time.Second

// profileIndex indexes integrations by the namespace/name of each IntegrationProfile they may use.
const profileIndex = "caravan.profile"

// profileLookup is the IntegrationProfile integration o names and the namespaces it is looked up
// in, as Camel K does: the one its annotation gives, else its own, then the operator's. name is ""
// when it names none.
func (r *Reconciler) profileLookup(o client.Object) (name string, namespaces []string) {
	annotations := o.GetAnnotations()
	name = annotations[camelv1.IntegrationProfileAnnotation]
	if name == "" {
		return "", nil
	}
	namespace := annotations[camelv1.IntegrationProfileNamespaceAnnotation]
	if namespace == "" {
		namespace = o.GetNamespace()
	}
	if namespace == r.Namespace {
		return name, []string{namespace}
	}
	return name, []string{namespace, r.Namespace}
}

// profileKeys are the namespace/name keys of the profiles integration o may use.
func (r *Reconciler) profileKeys(o client.Object) []string {
	name, namespaces := r.profileLookup(o)
	keys := make([]string, 0, len(namespaces))
	for _, ns := range namespaces {
		keys = append(keys, ns+"/"+name)
	}
	return keys
}

// integrationsOfProfile are the integrations that may use the IntegrationProfile p, so that a
// change of its traits or dependencies reaches them, as on Camel K.
func (r *Reconciler) integrationsOfProfile(ctx context.Context, p client.Object) []reconcile.Request {
	return r.integrationsIndexed(ctx, profileIndex, p.GetNamespace()+"/"+p.GetName())
}

// reconcileProfile finds the IntegrationProfile the integration names, as Camel K does: in the
// namespace its annotation gives, else the integration's, then in the operator's. Its traits go
// between the platform's and the integration's, its dependencies into the kit, its runtime
// version under the camel trait's. A profile the integration names and no namespace holds is
// waited for. A change of a profile in a namespace the operator watches reconciles the integrations
// that name it.
func (r *Reconciler) reconcileProfile(ctx context.Context, s *scope) (reconcile.Result, error) {
	s.profile = nil
	name, namespaces := r.profileLookup(s.it)
	if name == "" {
		return reconcile.Result{}, nil
	}
	for _, ns := range namespaces {
		p := &camelv1.IntegrationProfile{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p)
		if err == nil {
			s.profile = p
			return reconcile.Result{}, nil
		}
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("reading the IntegrationProfile %s/%s: %w", ns, name, err)
		}
	}
	s.Waiting = controller.Because(ReasonProfileNotFound, fmt.Sprintf(
		"the annotation %s names the IntegrationProfile %s, which is in neither namespace %s nor %s: create it, or fix the annotation",
		camelv1.IntegrationProfileAnnotation, name, namespaces[0], r.Namespace))
	return reconcile.Result{RequeueAfter: profileRetry}, nil
}

// profileUnread are the fields a profile sets that Caravan does not apply: those of spec.build
// other than runtimeVersion, and spec.kamelet.
func profileUnread(p *camelv1.IntegrationProfile) []string {
	var unread []string
	build := p.Spec.Build
	build.RuntimeVersion = ""
	if !equality.Semantic.DeepEqual(build, camelv1.IntegrationPlatformBuildSpec{}) {
		unread = append(unread, "spec.build (but runtimeVersion)")
	}
	if !equality.Semantic.DeepEqual(p.Spec.Kamelet, camelv1.IntegrationPlatformKameletSpec{}) {
		unread = append(unread, "spec.kamelet")
	}
	return unread
}

// profileTraits are the traits of the integration's profile, nil without one.
func (s *scope) profileTraits() camelv1.Traits {
	if s.profile == nil {
		return nil
	}
	return s.profile.Spec.Traits
}
