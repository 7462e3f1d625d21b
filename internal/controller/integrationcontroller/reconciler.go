// Package integrationcontroller reconciles the Integrations an operator owns into the children that
// run them. The children are a ConfigMap of sources and properties, a Deployment and, when the
// integration exposes a port, a Service, and with the pdb, ingress and prometheus traits a
// PodDisruptionBudget, an Ingress and a PodMonitor.
package integrationcontroller

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/metrics"
	"github.com/caravan-dev/caravan/internal/ownership"
	camelruntime "github.com/caravan-dev/caravan/internal/runtime"
	"github.com/caravan-dev/caravan/internal/trait"
)

// kitIndex indexes integrations by the name of the kit they use.
const kitIndex = "caravan.kit"

// Reconciler reconciles Integrations.
type Reconciler struct {
	// Client reads from the operator's cache, which holds only its share.
	Client client.Client
	// APIReader reads from the API server, for the rare check that the
	// cache cannot answer (who controls an object outside the share).
	APIReader client.Reader
	// Registrations tells a handover whether the previous owner is live.
	Registrations controller.Liveness
	OperatorID    string
	// Namespace is the operator's namespace, where its platform lives.
	Namespace    string
	FieldManager string
	Recorder     events.EventRecorder
	Metrics      *metrics.Metrics
	Clock        clock.PassiveClock
	// PodMonitors tells whether the cluster served the PodMonitor kind when the operator started.
	// The prometheus trait's PodMonitors are made, watched and removed only then.
	PodMonitors bool
	// Proxy are the operator's proxy variables, which integrations get (environment.httpProxy).
	Proxy []corev1.EnvVar
	// Health reads the readiness endpoint of an unready pod; nil is a GET to the pod.
	Health HealthReader
	// Stores caches the metadata of the ConfigMaps and Secrets mount.hotReload watches
	// (NewStoresCache); nil watches none.
	Stores cache.Cache

	// firstReady holds the UIDs whose first readiness was observed.
	firstReady sync.Map
	// failures holds, by integration, since when its steps end in an error (trackFailure).
	failures sync.Map
	// holds are the integrations that wait for their previous owner.
	holds holds
	// warned are the warnings given, per integration, at its generation.
	warned warnings
}

// +kubebuilder:rbac:groups=camel.apache.org,resources=integrations,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=camel.apache.org,resources=integrations/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps;services,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=batch,resources=cronjobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=podmonitors,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=camel.apache.org,resources=integrationkits,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=camel.apache.org,resources=kamelets,verbs=get;list;watch

// scope holds what the steps of one reconcile share.
type scope struct {
	// it is the integration as read; steps update its status.
	it *camelv1.Integration
	// platform is set by reconcilePlatform.
	platform *camelv1.IntegrationPlatform
	// profile is set by reconcileProfile: the IntegrationProfile the integration names, if any.
	profile *camelv1.IntegrationProfile
	// traits are set by reconcileTraits: platform defaults merged with the integration's.
	traits trait.Traits
	// digest is set by reconcileDigest.
	digest string
	// routeDependencies and kamelets are set by reconcileRoutes: the modules the routes use that
	// the runtime lacks, with their Kamelets' dependencies; and the sources of those Kamelets.
	routeDependencies []string
	kamelets          []camelv1.SourceSpec
	// kameletsMissing are set by reconcileRoutes: the Kamelets the routes use that the cluster
	// lacks, for the runtime to find on its classpath. routesRead tells that it looked, and
	// operatorNamespace is the other namespace it looked in.
	kameletsMissing   []string
	routesRead        bool
	operatorNamespace string
	// image is set by reconcileImage, once the integration has one to run.
	image string
	// archive tells that the kit's image holds a class-data-sharing archive of its classpath.
	archive bool
	// provider is the runtime the kit holds, set with image.
	provider camelruntime.Provider
	// deployment is set by reconcileDeployment: the Deployment as cached
	// or, when it applied it, as the API server stored it.
	deployment *appsv1.Deployment
	// unmounted is set by reconcilePods: why the kubelet cannot mount the volumes of a pod of a
	// Deployment that is not ready.
	unmounted *controller.Condition
	// cronJob is set by reconcileDeployment: the CronJob it applied, for an integration that runs as one.
	cronJob *batchv1.CronJob
	// cronJobAvailable is set by reconcileDeployment: the CronJobAvailable condition, nil when the
	// integration has no scheduled consumer to tell about. cronRead tells that it looked.
	cronJobAvailable *metav1.Condition
	cronRead         bool
	// Outcome is set by a step that waits, found bad input, or found the namespace being deleted. A
	// wait is for something other than the Deployment (the platform, a kit). In a namespace being
	// deleted the integration goes too: its children cannot be applied any more, and this reconcile
	// writes nothing.
	controller.Outcome
	// traitsIgnored and traitsIgnoredReason are set by reconcileTraits: the TraitsIgnored
	// condition's message and reason. They are set when the integration sets traits Caravan does
	// not act on.
	traitsIgnored       string
	traitsIgnoredReason controller.Reason
	// traitsChecked is set by reconcileTraits once it has looked.
	traitsChecked bool
	// notDeployed is set by reconcileUndeploy and reconcileDeploy: the integration is built and not
	// deployed (Build Complete). Its dont-run-after-build annotation asks for that.
	notDeployed bool
	// hold is set by reconcileOwnership while the previous owner has not
	// released the integration: this reconcile writes nothing.
	hold bool
	// failing is the error the steps ended with, and since when they fail (set after them).
	failing      error
	failingSince time.Time
	// replaceKept: the Deployment another operator made, kept until now, is to be replaced with
	// this operator's (set by reconcileKept).
	replaceKept bool
	// mountedVersions are set by reconcileMountedVersions: the versions of the stores
	// mount.hotReload watches.
	mountedVersions []string
}

// kitNamed passes the status write that names the integration's kit. The
// kit's events reach the integrations that name it through an index of
// the cache; a kit that became ready after the reconcile that read it
// and before that write reached the cache found none, and no other event
// would come: the integration is reconciled again once the index has it.
var kitNamed = predicate.TypedFuncs[client.Object]{
	UpdateFunc: func(e event.TypedUpdateEvent[client.Object]) bool {
		old, okOld := e.ObjectOld.(*camelv1.Integration)
		cur, okNew := e.ObjectNew.(*camelv1.Integration)
		return okOld && okNew && !equality.Semantic.DeepEqual(old.Status.IntegrationKit, cur.Status.IntegrationKit)
	},
}

// statusCleared passes the update of a status that someone else emptied, for the operator to
// re-initialise the integration. `kamel rebuild` does that; the operator's own writes never leave
// the phase empty.
var statusCleared = predicate.TypedFuncs[client.Object]{
	UpdateFunc: func(e event.TypedUpdateEvent[client.Object]) bool {
		old, okOld := e.ObjectOld.(*camelv1.Integration)
		cur, okNew := e.ObjectNew.(*camelv1.Integration)
		return okOld && okNew && old.Status.Phase != "" && cur.Status.Phase == ""
	},
}

// notCreated drops the creation events of the children whose status the integration's does not
// follow. Those are the ConfigMap and the Service: the reconcile that wrote one has nothing left to
// do when it appears, and their changes and deletions still come through. The Deployment's creation
// events do come through: a Deployment that appears may already be rolled out (on a move).
var notCreated = predicate.TypedFuncs[client.Object]{
	CreateFunc: func(event.TypedCreateEvent[client.Object]) bool { return false },
}

// rolloutSeen passes the Deployment events that change what the integration shows. Those are its
// deletion; its appearance when it is rolled out already (on a move, the new owner's cache gains it
// rolled out); a change of its spec, of its labels (the operator's id and applied hash among them)
// or owners; and a change of what its rollout tells (ready or not, and the message the Ready
// condition carries). A reconcile for any other would find nothing to do: the appearance of a
// Deployment still rolling out (the reconcile that applied it reported that), and the Deployment
// controller's other writes (its revision annotation, observed generation, conditions, one pod of
// several).
var rolloutSeen = predicate.TypedFuncs[client.Object]{
	CreateFunc: func(e event.TypedCreateEvent[client.Object]) bool {
		d, ok := e.Object.(*appsv1.Deployment)
		if !ok {
			return true
		}
		ready, _ := deploymentReady(d)
		return ready
	},
	UpdateFunc: func(e event.TypedUpdateEvent[client.Object]) bool {
		old, okOld := e.ObjectOld.(*appsv1.Deployment)
		cur, okNew := e.ObjectNew.(*appsv1.Deployment)
		if !okOld || !okNew {
			return true
		}
		if old.Generation != cur.Generation || !cur.DeletionTimestamp.IsZero() ||
			!maps.Equal(old.Labels, cur.Labels) ||
			!equality.Semantic.DeepEqual(old.OwnerReferences, cur.OwnerReferences) {
			return true
		}
		wasReady, was := deploymentReady(old)
		isReady, is := deploymentReady(cur)
		return wasReady != isReady || was != is
	},
}

// SetupWithManager registers the controller and its watches.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, wrap controller.Wrap) error {
	err := mgr.GetFieldIndexer().IndexField(ctx, &camelv1.Integration{}, kitIndex, func(o client.Object) []string {
		it := o.(*camelv1.Integration)
		var kits []string
		if it.Spec.IntegrationKit != nil && it.Spec.IntegrationKit.Name != "" {
			kits = append(kits, it.Spec.IntegrationKit.Name)
		}
		if it.Status.IntegrationKit != nil && it.Status.IntegrationKit.Name != "" {
			kits = append(kits, it.Status.IntegrationKit.Name)
		}
		return kits
	})
	if err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &camelv1.Integration{}, profileIndex, r.profileKeys); err != nil {
		return err
	}
	// Status writes, this controller's own, cause no reconcile: they change neither generation,
	// annotations nor labels. The exceptions are the previous owner's release, for the new owner to
	// adopt at once, a write that names another kit (see kitNamed), a status someone else cleared
	// (see statusCleared), and a client's deploy or undeploy request (see runRequested).
	specOrAssignment := predicate.Or(predicate.GenerationChangedPredicate{},
		predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}, released, kitNamed, statusCleared, runRequested)
	b := ctrl.NewControllerManagedBy(mgr).
		Named("integration").
		For(&camelv1.Integration{}, builder.WithPredicates(specOrAssignment)).
		Owns(&appsv1.Deployment{}, builder.WithPredicates(rolloutSeen)).
		Owns(&corev1.ConfigMap{}, builder.WithPredicates(notCreated)).
		Owns(&corev1.Service{}, builder.WithPredicates(notCreated)).
		Owns(&policyv1.PodDisruptionBudget{}, builder.WithPredicates(notCreated)).
		Owns(&networkingv1.Ingress{}, builder.WithPredicates(notCreated)).
		Owns(&batchv1.CronJob{}, builder.WithPredicates(notCreated))
	if r.PodMonitors {
		b = b.Owns(PodMonitorMetadata(), builder.WithPredicates(notCreated))
	}
	if r.Stores != nil {
		for _, src := range r.watchStores() {
			b = b.WatchesRawSource(src)
		}
	}
	return b.Watches(&camelv1.IntegrationKit{}, handler.EnqueueRequestsFromMapFunc(r.integrationsOfKit)).
		Watches(&camelv1.IntegrationProfile{}, handler.EnqueueRequestsFromMapFunc(r.integrationsOfProfile)).
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: controller.Workers}).
		Complete(wrap("Integration", r))
}

// integrationsOfKit are the integrations that use the IntegrationKit kit.
func (r *Reconciler) integrationsOfKit(ctx context.Context, kit client.Object) []reconcile.Request {
	return r.integrationsIndexed(ctx, kitIndex, kit.GetName(), client.InNamespace(kit.GetNamespace()))
}

// integrationsIndexed are the cached integrations whose index holds value, as requests.
func (r *Reconciler) integrationsIndexed(ctx context.Context, index, value string, opts ...client.ListOption) []reconcile.Request {
	list := &camelv1.IntegrationList{}
	if err := r.Client.List(ctx, list, append(opts, client.MatchingFields{index: value})...); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, it := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&it)})
	}
	return reqs
}

// Reconcile reconciles one object; a lost optimistic-lock race is retried
// quietly.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return controller.RequeueOnConflict(r.reconcile(ctx, req))
}

// reconcile runs the steps in order; the status is computed from what
// they observed and written once, at the end.
func (r *Reconciler) reconcile(ctx context.Context, req reconcile.Request) (result reconcile.Result, retErr error) {
	it := &camelv1.Integration{}
	if err := r.Client.Get(ctx, req.NamespacedName, it); err != nil {
		if apierrors.IsNotFound(err) {
			// Not in this operator's cache: deleted, or assigned to
			// another operator. Neither calls for a cleanup; a move
			// calls for a release.
			r.trackHold(req.NamespacedName, nil, false)
			r.warned.forget(req.NamespacedName)
			return reconcile.Result{}, r.releaseIfMoved(ctx, req.NamespacedName)
		}
		return reconcile.Result{}, err
	}
	if !it.DeletionTimestamp.IsZero() {
		r.trackHold(req.NamespacedName, it, false)
		return reconcile.Result{}, nil
	}
	if !ownership.Owns(it.Annotations, r.OperatorID) {
		r.trackHold(req.NamespacedName, it, false)
		return reconcile.Result{}, r.release(ctx, it)
	}
	before := it.DeepCopy()
	s := &scope{it: it}
	defer func() {
		r.trackHold(req.NamespacedName, it, s.hold)
		s.failing, s.failingSince = r.trackFailure(req.NamespacedName, retErr)
		if err := r.patchStatus(ctx, before, s); err != nil {
			// The status must land: a failed write is retried, even
			// when the steps ended in a terminal error.
			retErr = err
		}
	}()
	steps := []controller.Step[*scope]{
		r.reconcileOwnership,
		r.reconcileUndeploy,
		r.reconcileKept,
		r.reconcilePlatform,
		r.reconcileProfile,
		r.reconcileTraits,
		r.reconcileDigest,
		r.reconcileRoutes,
		r.reconcileImage,
		r.reconcileMountedVersions,
		r.reconcileDeploy,
		r.reconcileConfigMap,
		r.reconcileService,
		r.reconcilePodDisruptionBudget,
		r.reconcileIngress,
		r.reconcilePodMonitor,
		// Last: once the Deployment carries this operator's id, the
		// children no longer look like a previous owner's.
		r.reconcileDeployment,
		// After the Deployment: a stalled rollout's pods tell why.
		r.reconcilePods,
	}
	res, err := controller.RunSteps(ctx, s, &s.Outcome, steps...)
	if err == nil && res.IsZero() && len(s.kameletsMissing) > 0 {
		// Kamelets outside the operator's namespace are not watched: look again for those missing.
		res.RequeueAfter = missingKameletRetry
	}
	return res, err
}

// patchStatus computes the status and writes it when it changed, with a precondition on the
// resourceVersion read. A status computed from a stale read never overwrites a newer one; an
// adoption and a new phase are told in Events.
func (r *Reconciler) patchStatus(ctx context.Context, before *camelv1.Integration, s *scope) error {
	if s.hold || s.Quiet {
		return nil // waiting for the previous owner's release, or going: no write
	}
	computeStatus(s)
	wrote, err := controller.PatchStatus(ctx, r.Client, before, s.it, before.Status, s.it.Status)
	if wrote {
		r.recordTransition(before, s.it)
	}
	return err
}

// trackFailure records whether the steps of integration key ended in err, an error to retry, and
// returns it with since when they fail. A lost optimistic-lock race and bad input do not count:
// the first is retried at once, the second is the Stalled condition's.
func (r *Reconciler) trackFailure(key types.NamespacedName, err error) (error, time.Time) {
	if err == nil || apierrors.IsConflict(err) || errors.Is(err, reconcile.TerminalError(nil)) {
		r.failures.Delete(key)
		return nil, time.Time{}
	}
	since, _ := r.failures.LoadOrStore(key, r.Clock.Now())
	return err, since.(time.Time)
}
