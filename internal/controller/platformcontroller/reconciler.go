// Package platformcontroller keeps the operator's own IntegrationPlatform, with its defaults
// resolved into status. The platform is in the operator's namespace, named by the operator id, and
// carries the id.
package platformcontroller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/apply"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/kameletcatalog"
	"github.com/caravan-dev/caravan/internal/platform"
)

// Reconciler keeps the platform <namespace>/<operator id> in place.
type Reconciler struct {
	Client client.Client
	// APIReader reads the Kamelets of the namespace with their managed fields, which the cache
	// strips, and the registry's Secret.
	APIReader  client.Reader
	OperatorID string
	Namespace  string
	Version    string
	// FieldManager owns the fields the operator applies.
	FieldManager string
	// SkipCatalog has the operator install no Kamelet catalog, whatever the platform says.
	SkipCatalog bool

	// installed are the catalogs installed since the operator started.
	installed installs
}

// +kubebuilder:rbac:groups=camel.apache.org,resources=integrationplatforms,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=camel.apache.org,resources=integrationplatforms/status,verbs=get;update;patch

// SetupWithManager watches the platform (the cache only holds this
// operator's) and triggers one reconcile at start, so a missing platform
// is created.
func (r *Reconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager, wrap controller.Wrap) error {
	kick := make(chan event.GenericEvent, 1)
	kick <- event.GenericEvent{Object: &camelv1.IntegrationPlatform{ObjectMeta: metav1.ObjectMeta{
		Namespace: r.Namespace, Name: r.OperatorID}}}
	return ctrl.NewControllerManagedBy(mgr).
		Named("integrationplatform").
		For(&camelv1.IntegrationPlatform{}).
		WatchesRawSource(source.Channel(kick, &handler.EnqueueRequestForObject{})).
		// The catalog's kit, once built, has its Kamelets installed.
		Watches(&camelv1.IntegrationKit{}, handler.EnqueueRequestsFromMapFunc(r.platformOfCatalogKit)).
		// An earlier installer's Kamelet deleted (by Helm, upgrading to a chart without it) has the
		// catalog's of its name applied.
		Watches(&camelv1.Kamelet{}, handler.Funcs{DeleteFunc: r.starterDeleted}).
		// One worker: an operator has one platform.
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: 1}).
		Complete(wrap("IntegrationPlatform", r))
}

// platformOfCatalogKit maps the kit of the Kamelet catalog to the operator's platform.
func (r *Reconciler) platformOfCatalogKit(_ context.Context, k client.Object) []reconcile.Request {
	if k.GetNamespace() != r.Namespace || k.GetLabels()[CatalogLabel] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: r.Namespace, Name: r.OperatorID}}}
}

// starterDeleted has the catalog installed again when one of an earlier installer's Kamelets in the
// operator's namespace is deleted, so that the catalog's of its name takes its place.
func (r *Reconciler) starterDeleted(_ context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	k, ok := e.Object.(*camelv1.Kamelet)
	if !ok || k.Namespace != r.Namespace || !kameletcatalog.IsStarter(k) {
		return
	}
	r.installed.forget()
	q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: r.Namespace, Name: r.OperatorID}})
}

// Reconcile reconciles the operator's platform; a lost optimistic-lock race is retried quietly.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return controller.RequeueOnConflict(r.reconcile(ctx, req))
}

// scope holds what the steps of one reconcile share.
type scope struct {
	// itp is the platform as read; computeStatus updates its status.
	itp *camelv1.IntegrationPlatform
	// operatorID and version are the operator's, which the status names.
	operatorID, version string
	// settings is set by reconcileSettings: the platform's spec, defaults filled in.
	settings *camelv1.IntegrationPlatformSpec
	// catalog is set by reconcileKameletCatalog: the KameletCatalogAvailable condition, nil when
	// the platform opts out; catalogChecked tells that the step ran.
	catalog        *metav1.Condition
	catalogChecked bool
	// Outcome is never set: a platform has no bad input and waits for nothing.
	controller.Outcome
}

// reconcile creates the platform when it is missing, and resolves its settings into its status.
func (r *Reconciler) reconcile(ctx context.Context, req reconcile.Request) (result reconcile.Result, retErr error) {
	if req.Namespace != r.Namespace || req.Name != r.OperatorID {
		// Another platform carrying this operator's id: not one it manages.
		return reconcile.Result{}, nil
	}
	itp := &camelv1.IntegrationPlatform{}
	err := r.Client.Get(ctx, req.NamespacedName, itp)
	if apierrors.IsNotFound(err) || (err == nil && itp.OperatorID() != r.OperatorID) {
		// Missing, or its id was removed: put the id back. The next
		// reconcile, from the watch, resolves the status.
		return reconcile.Result{}, r.ensure(ctx, req.NamespacedName)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	before := itp.DeepCopy()
	s := &scope{itp: itp, operatorID: r.OperatorID, version: r.Version}
	defer func() {
		if err := r.patchStatus(ctx, before, s); err != nil {
			// The status must land: a failed write is retried.
			retErr = err
		}
	}()
	steps := []controller.Step[*scope]{
		reconcileSettings,
		r.reconcileKameletCatalog,
	}
	return controller.RunSteps(ctx, s, &s.Outcome, steps...)
}

// patchStatus computes the status and writes it when it changed, with a precondition on the resourceVersion read.
func (r *Reconciler) patchStatus(ctx context.Context, before *camelv1.IntegrationPlatform, s *scope) error {
	computeStatus(s)
	_, err := controller.PatchStatus(ctx, r.Client, before, s.itp, before.Status, s.itp.Status)
	return err
}

// reconcileSettings resolves the platform's settings, filling in the defaults.
func reconcileSettings(_ context.Context, s *scope) (reconcile.Result, error) {
	settings := platform.Resolve(s.itp.Spec)
	s.settings = &settings
	return reconcile.Result{}, nil
}

// ensure applies the platform's identity (name, operator-id annotation
// and label) and nothing else, so that it never overwrites a user's spec.
func (r *Reconciler) ensure(ctx context.Context, key types.NamespacedName) error {
	itp := &camelv1.IntegrationPlatform{
		TypeMeta: metav1.TypeMeta{APIVersion: camelv1.GroupVersion.String(), Kind: "IntegrationPlatform"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: key.Namespace, Name: key.Name,
			Annotations: map[string]string{camelv1.OperatorIDAnnotation: r.OperatorID},
			Labels:      map[string]string{camelv1.OperatorIDLabel: r.OperatorID},
		},
	}
	u, err := apply.Configuration(itp)
	if err != nil {
		return err
	}
	if err := r.Client.Apply(ctx, u, client.FieldOwner(r.FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying platform %s: %w", key, err)
	}
	return nil
}
