package pipecontroller

import (
	"context"
	"errors"
	"fmt"
	"slices"

	authorizationv1 "k8s.io/api/authorization/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/apply"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/internal/pipe"
)

// reconcileObserved reads the generated Integration from the cache, which
// holds it when it is in this operator's share.
func (r *Reconciler) reconcileObserved(ctx context.Context, s *scope) (reconcile.Result, error) {
	it := &camelv1.Integration{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(s.binding), it)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	s.integration = it
	return reconcile.Result{}, nil
}

// reconcileSpec compiles the spec of the Integration the binding generates.
// A missing Kamelet is waited for (it may be created yet); other compile errors are bad input
// the user must fix; a failed lookup is retried.
func (r *Reconciler) reconcileSpec(ctx context.Context, s *scope) (reconcile.Result, error) {
	res := &resolver{ctx: ctx, cache: r.Client, api: r.APIReader, reviews: r.Client, binding: s.binding.GetNamespace(), operator: r.Namespace,
		serviceAccount: bindingServiceAccount(s.spec)}
	compiled, err := pipe.Compile(*s.spec, res)
	switch {
	case res.err != nil:
		return reconcile.Result{}, fmt.Errorf("looking up kamelets: %w", res.err)
	case err != nil:
		s.Failure = controller.Because(ReasonInvalidBinding, err.Error())
		if res.uncached {
			// The fix may be to a Kamelet that no watch reports.
			return reconcile.Result{RequeueAfter: kameletRecheck}, nil
		}
		return reconcile.Result{}, nil
	}
	s.compiled, s.compiledRead, s.missing, s.ignoredDataTypes = &compiled.Spec, true, compiled.MissingKamelets, compiled.IgnoredDataTypes
	return reconcile.Result{}, nil
}

// reconcileIntegration applies the desired Integration unless the observed one
// is current. It writes only an Integration this binding controls, or
// none: a foreign Integration of the same name is a conflict the user
// resolves. An Integration outside this operator's cache is new, or is
// being moved here from another operator with the binding.
func (r *Reconciler) reconcileIntegration(ctx context.Context, s *scope) (reconcile.Result, error) {
	observed := s.integration
	if observed == nil {
		it := &camelv1.Integration{}
		err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(s.binding), it)
		switch {
		case err == nil:
			observed = it
		case !apierrors.IsNotFound(err):
			return reconcile.Result{}, err
		}
	}
	s.desired = desiredIntegration(r.Kind, s.binding, *s.compiled, integrationLabel(s.binding, observed))
	if observed != nil {
		if res := r.checkControl(s, observed); !res.IsZero() || s.Failure != nil {
			return res, nil
		}
		if s.integration != nil && current(s.desired, observed) {
			return reconcile.Result{}, nil
		}
	}
	// A write from a stale view of the binding would pull its
	// Integration back from the operator the binding moved to: a fresh
	// read confirms the binding is still this operator's first.
	if mine, err := r.stillMine(ctx, s.binding); err != nil || !mine {
		s.Quiet = !mine
		return reconcile.Result{}, err
	}
	if s.replaceForeign {
		if _, err := controller.ReplaceForeign(ctx, r.Client, r.APIReader, s.desired, r.FieldManager); err != nil {
			return reconcile.Result{}, fmt.Errorf("replacing Integration %s, which another operator made: %w", s.desired.Name, err)
		}
		s.applied = true
		return reconcile.Result{}, nil
	}
	cfg, err := apply.Configuration(s.desired)
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := r.Client.Apply(ctx, cfg, client.FieldOwner(r.FieldManager), client.ForceOwnership); err != nil {
		return reconcile.Result{}, fmt.Errorf("applying Integration %s: %w", s.desired.Name, err)
	}
	s.applied = true
	ctrl.LoggerFrom(ctx).V(1).Info("Integration applied", "integration", klog.KObj(s.desired), "new", observed == nil)
	return reconcile.Result{}, nil
}

// checkControl accepts an Integration controlled by this binding. One
// controlled by an earlier binding of the same kind and name is being
// deleted with it: wait. Any other is a conflict.
func (r *Reconciler) checkControl(s *scope, it *camelv1.Integration) reconcile.Result {
	owner := metav1.GetControllerOf(it)
	switch {
	case owner != nil && owner.UID == s.binding.GetUID():
		return reconcile.Result{}
	case owner != nil && owner.Kind == r.Kind.GVK.Kind && owner.Name == s.binding.GetName():
		s.Waiting = controller.Because(ReasonPreviousDeleted, fmt.Sprintf(
			"waiting for Integration %s of a previous %s of the same name to be deleted", it.Name, r.Kind.GVK.Kind))
		return reconcile.Result{RequeueAfter: deletionRetry}
	}
	by := "no controller"
	if owner != nil {
		by = fmt.Sprintf("%s %s", owner.Kind, owner.Name)
	}
	s.Failure = controller.Because(ReasonNameConflict, fmt.Sprintf(
		"Integration %s/%s exists and is controlled by %s, not by this %s: rename the %s or delete the Integration",
		it.Namespace, it.Name, by, r.Kind.GVK.Kind, r.Kind.GVK.Kind))
	return reconcile.Result{RequeueAfter: nameTakenRetry}
}

// release hands the label of a binding assigned elsewhere over to the operator it names, or removes
// it. The patch has a precondition on the version read: it is this operator's last write to the
// binding. While this operator is live, the new one waits for it (the label mirror does not take a
// live operator's label), so their writes never interleave. The Integration is released by the
// Integration controller, once the new operator has assigned it.
func (r *Reconciler) release(ctx context.Context, b client.Object) error {
	if b.GetLabels()[camelv1.OperatorIDLabel] != r.OperatorID {
		return nil
	}
	to := ownership.AssignedID(b.GetAnnotations())
	if err := controller.HandLabelOver(ctx, r.Client, b); err != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).Info("Released binding", "to", to)
	return nil
}

// stillMine reads the binding from the API server and reports whether it is
// the same binding and still assigned to this operator. The cache may lag
// behind a move of the binding that its Integration already followed; a
// write from that stale view would pull the Integration back.
func (r *Reconciler) stillMine(ctx context.Context, b client.Object) (bool, error) {
	fresh := r.Kind.New()
	err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(b), fresh)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return fresh.GetUID() == b.GetUID() && ownership.Owns(fresh.GetAnnotations(), r.OperatorID), nil
}

// resolver finds Kamelets for pipe.Compile: in the binding's namespace
// first, then in the operator's namespace.
//
// The operator's namespace is read from the cache, which holds all its
// Kamelets (the kamelet controller validates them). Any other namespace is
// read from the API server: caching every Kamelet of the cluster would
// make each operator's memory grow with the cluster rather than with its
// share, and these reads are few: one per Kamelet a binding uses, when the
// binding or its Integration changes, or every 10 s while one is missing.
type resolver struct {
	ctx        context.Context
	cache, api client.Reader
	// reviews creates the SubjectAccessReviews of cross-namespace Kamelets.
	reviews client.Writer
	// serviceAccount is the binding's pods', whose rights on another namespace's Kamelets count.
	serviceAccount    string
	binding, operator string
	// err is the first lookup that failed for another reason than absence.
	err error
	// uncached is set when a Kamelet was read from the API server: a
	// change to it reaches the binding at its next reconcile only.
	uncached bool
}

// Namespace is the binding's namespace.
func (r *resolver) Namespace() string { return r.binding }

// Kamelet returns the Kamelet named name: of the ref's namespace when it names one other than
// the binding's, which the binding's ServiceAccount must be allowed to read Kamelets of, as on
// Camel K; else of the binding's namespace, then of the operator's.
func (r *resolver) Kamelet(name, namespace string) (*camelv1.Kamelet, error) {
	namespaces := []string{r.binding}
	if namespace != "" && namespace != r.binding {
		if err := r.mayRead(name, namespace); err != nil {
			return nil, err
		}
		namespaces = []string{namespace}
	}
	if r.operator != r.binding && !slices.Contains(namespaces, r.operator) {
		namespaces = append(namespaces, r.operator)
	}
	for _, ns := range namespaces {
		reader := r.api
		if ns == r.operator {
			reader = r.cache
		}
		k := &camelv1.Kamelet{}
		err := reader.Get(r.ctx, client.ObjectKey{Namespace: ns, Name: name}, k)
		if err == nil {
			r.uncached = r.uncached || ns != r.operator
			return k, nil
		}
		if !apierrors.IsNotFound(err) {
			r.err = errors.Join(r.err, err)
			return nil, err
		}
	}
	return nil, pipe.NotFound(name, namespaces...)
}

// mayRead refuses a Kamelet of namespace unless the binding's ServiceAccount may get Kamelets
// there, which a SubjectAccessReview tells. A refusal is the binding's to fix; it is looked at
// again at the binding's next reconcile.
func (r *resolver) mayRead(name, namespace string) error {
	r.uncached = true
	if r.serviceAccount == "" {
		return fmt.Errorf("kamelet %s is of namespace %s: as on Camel K, set spec.serviceAccountName to a ServiceAccount of namespace %s "+
			"that may get kamelets in %s", name, namespace, r.binding, namespace)
	}
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		// The names Kubernetes authenticates a ServiceAccount's token as.
		User:   "system:serviceaccount:" + r.binding + ":" + r.serviceAccount,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + r.binding, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: "get",
			Group: camelv1.GroupVersion.Group, Resource: "kamelets", Name: name},
	}}
	if err := r.reviews.Create(r.ctx, review); err != nil {
		r.err = errors.Join(r.err, err)
		return fmt.Errorf("asking whether the ServiceAccount %s/%s may get kamelets in namespace %s: %w", r.binding, r.serviceAccount, namespace, err)
	}
	if !review.Status.Allowed {
		return fmt.Errorf("the ServiceAccount %s/%s may not get kamelets in namespace %s: grant it (kubectl create rolebinding -n %s "+
			"--clusterrole caravan-view --serviceaccount %s:%s NAME), or use a Kamelet of namespace %s",
			r.binding, r.serviceAccount, namespace, namespace, r.binding, r.serviceAccount, r.binding)
	}
	return nil
}

// bindingServiceAccount is the ServiceAccount a binding's pods run as.
func bindingServiceAccount(spec *camelv1.PipeSpec) string {
	if spec.ServiceAccountName != "" {
		return spec.ServiceAccountName
	}
	if spec.Integration != nil {
		return spec.Integration.ServiceAccountName
	}
	return ""
}
