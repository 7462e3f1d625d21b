package integrationcontroller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/apply"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/digest"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/kit"
	"github.com/caravan-dev/caravan/internal/maven"
	"github.com/caravan-dev/caravan/internal/platform"
	"github.com/caravan-dev/caravan/internal/render"
	camelruntime "github.com/caravan-dev/caravan/internal/runtime"
	"github.com/caravan-dev/caravan/internal/trait"
)

// errNotOurs marks a child name taken by an object the integration does
// not control.
var errNotOurs = errors.New("name taken")

// waitRetry is how soon a step that waits for something without a watch looks again.
// kitRefusedRetry is how soon a kit the API server refused to create is tried again.
const (
	waitRetry       = 5 * time.Second
	kitRefusedRetry = 30 * time.Second
)

// reconcilePlatform finds the operator's platform, whose trait defaults
// apply to the integration.
func (r *Reconciler) reconcilePlatform(ctx context.Context, s *scope) (reconcile.Result, error) {
	itp := &camelv1.IntegrationPlatform{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.OperatorID}, itp)
	if apierrors.IsNotFound(err) {
		s.Waiting = controller.Because(ReasonPlatformNotReady, fmt.Sprintf(
			"waiting for the IntegrationPlatform %s/%s of operator %s", r.Namespace, r.OperatorID, r.OperatorID))
		return reconcile.Result{RequeueAfter: waitRetry}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	s.platform = itp
	s.it.Status.Platform = itp.Name
	return reconcile.Result{}, nil
}

// reconcileTraits parses the traits Caravan acts on; a wrong value is bad
// input the user must fix.
func (r *Reconciler) reconcileTraits(_ context.Context, s *scope) (reconcile.Result, error) {
	traits, err := trait.Parse(trait.Merge(trait.Merge(s.platform.Spec.Traits, s.profileTraits()), s.it.Spec.Traits))
	if err != nil {
		s.Failure = controller.Because(ReasonInvalidTrait, err.Error())
		return reconcile.Result{}, nil
	}
	s.traits = traits
	r.warnIgnoredTraits(s)
	return reconcile.Result{}, nil
}

// warnIgnoredTraits records what the integration's traits, and its platform's, set that takes no
// effect, for the TraitsIgnored condition: Camel K's other traits, names of no Camel K trait at
// all, properties that Camel K's trait does not have or that Caravan does not apply, Quarkus
// properties, and the same of its IntegrationProfile, with the profile's fields Caravan does not
// apply. A Warning Event tells the user, once per generation.
func (r *Reconciler) warnIgnoredTraits(s *scope) {
	it := s.it
	s.traitsChecked = true
	own, inherited := trait.Check(it.Spec.Traits), trait.Check(s.platform.Spec.Traits)
	if r.provider(s) == camelruntime.Quarkus {
		// Camel Quarkus reads them.
		own.Quarkus, inherited.Quarkus = nil, nil
	}
	var parts []string
	if !own.Empty() {
		parts = append(parts, own.Message())
	}
	if !inherited.Empty() {
		parts = append(parts, fmt.Sprintf("from the traits of the IntegrationPlatform %s/%s: %s", s.platform.Namespace, s.platform.Name,
			inherited.Message()))
	}
	typos := own.Typos() || inherited.Typos()
	if p := s.profile; p != nil {
		if c := trait.Check(p.Spec.Traits); !c.Empty() {
			parts = append(parts, fmt.Sprintf("from the traits of the IntegrationProfile %s/%s: %s", p.Namespace, p.Name, c.Message()))
			typos = typos || c.Typos()
		}
		if unread := profileUnread(p); len(unread) > 0 {
			parts = append(parts, fmt.Sprintf("the IntegrationProfile %s/%s's %s are kept but do nothing: Caravan applies a profile's traits, "+
				"dependencies and spec.build.runtimeVersion; set the others on the operator's platform", p.Namespace, p.Name, strings.Join(unread, ", ")))
		}
	}
	if types := render.IgnoredConfigurations(it); len(types) > 0 {
		parts = append(parts, fmt.Sprintf("the spec.configuration entries of type %s are kept but do nothing, as on Camel K 2.x: "+
			"use the mount trait's configs and resources (caravan run --config, --resource)", strings.Join(types, ", ")))
	}
	if len(parts) == 0 {
		return
	}
	s.traitsIgnored = strings.Join(parts, "; ")
	if typos {
		s.traitsIgnoredReason = ReasonUnknownTraits
	} else {
		s.traitsIgnoredReason = ReasonTraitsNotActedOn
	}
	if !r.warned.first(client.ObjectKeyFromObject(it), "TraitsIgnored", it.Generation) {
		return
	}
	controller.Event(r.Recorder, it, nil, corev1.EventTypeWarning, "TraitsIgnored", "Reconcile", s.traitsIgnored)
}

// reconcileDigest computes what defines the integration. When it changed
// (a new spec), the integration is re-initialised: a kit chosen under the
// old definition is dropped.
func (r *Reconciler) reconcileDigest(_ context.Context, s *scope) (reconcile.Result, error) {
	d, err := digest.Integration(s.it)
	if err != nil {
		s.Failure = controller.Because(ReasonInvalidSpec, err.Error())
		return reconcile.Result{}, nil
	}
	s.digest = d
	if s.it.Status.Digest != d {
		s.it.Status.Digest = d
		s.it.Status.IntegrationKit = nil
		s.it.Status.InitializationTimestamp = &metav1.Time{Time: r.Clock.Now()}
	}
	return reconcile.Result{}, nil
}

// reconcileImage decides the image the pods run. It is the container.image trait's; or the image of
// the kit named by spec.integrationKit, which must be one of this operator's kits; or else the
// image of the operator's kit for the integration's dependencies, made (and built) when missing.
func (r *Reconciler) reconcileImage(ctx context.Context, s *scope) (reconcile.Result, error) {
	if img := s.traits.Container.Image(); img != "" {
		if err := image.ValidateReference(img); err != nil {
			s.Failure = controller.Because(ReasonInvalidImage, fmt.Sprintf(
				"trait container.image: %v; a kubelet would refuse to pull it (InvalidImageName)", err))
			return reconcile.Result{}, nil
		}
		s.image = img
		r.warnUnbuiltDependencies(s)
		return reconcile.Result{}, nil
	}
	if render.Sourceless(s.it) {
		// A kit holds dependencies, not routes: without sources the
		// integration must bring its own image.
		s.Failure = controller.Because(ReasonNoSources, "the integration has no sources and no flows: "+
			"add some, or set the container trait's image to run a pre-built image that holds the routes")
		return reconcile.Result{}, nil
	}
	req := kit.Request{OperatorID: r.OperatorID, Namespace: s.it.Namespace, Previous: s.it.Status.Ownership.Previous}
	if ref := s.it.Status.IntegrationKit; ref != nil {
		req.Current = ref.Name
	}
	if ref := s.it.Spec.IntegrationKit; ref != nil && ref.Name != "" {
		req.PinnedNamespace, req.PinnedName = cmp.Or(ref.Namespace, s.it.Namespace), ref.Name
	} else {
		if _, err := camelruntime.ParseDependencies(s.it.Spec.Dependencies); err != nil {
			s.Failure = controller.Because(ReasonInvalidDependency, "spec.dependencies: "+err.Error())
			return reconcile.Result{}, nil
		}
		if _, err := maven.ParseRepositories(s.it.Spec.Repositories); err != nil {
			s.Failure = controller.Because(ReasonInvalidRepository, "spec.repositories: "+err.Error())
			return reconcile.Result{}, nil
		}
		req.Spec = r.kitSpec(s)
		// As Camel K does, the status lists the dependencies the kit is built with.
		s.it.Status.Dependencies = req.Spec.Dependencies
		provider, err := camelruntime.ProviderNamed(req.Spec.RuntimeProvider)
		if err != nil {
			s.Failure = controller.Because(ReasonInvalidRuntimeProvider, fmt.Sprintf(
				"the spec.build.runtimeProvider of the IntegrationPlatform %s/%s: %v", r.Namespace, r.OperatorID, err))
			return reconcile.Result{}, nil
		}
		if err := provider.CheckVersion(req.Spec.RuntimeVersion); err != nil {
			s.Failure = controller.Because(ReasonInvalidRuntimeVersion, fmt.Sprintf(
				"the spec.build.runtimeVersion of the IntegrationPlatform %s/%s, or of the integration's IntegrationProfile: %v", r.Namespace, r.OperatorID, err))
			return reconcile.Result{}, nil
		}
	}
	choice, err := kit.Choose(req, kitLookup{ctx: ctx, r: r, s: s})
	if err != nil {
		return reconcile.Result{}, err
	}
	return r.useKit(ctx, s, choice)
}

// kitSpec is the spec of the kit of the integration's dependencies, its routes' and its traits'.
func (r *Reconciler) kitSpec(s *scope) kit.Spec {
	deps := slices.Concat(s.it.Spec.Dependencies, s.routeDependencies)
	if s.profile != nil {
		deps = append(deps, s.profile.Spec.Dependencies...)
	}
	resolved := platform.Resolve(s.platform.Spec)
	b := &resolved.Build
	platformProvider, _ := camelruntime.ProviderNamed(b.RuntimeProvider)
	provider := r.provider(s)
	if provider != nil && provider != platformProvider {
		// The platform's version is its own provider's: the camel trait's provider starts from its default.
		b.RuntimeVersion = provider.DefaultVersion()
	} else if s.profile != nil && strings.TrimSpace(s.profile.Spec.Build.RuntimeVersion) != "" {
		// The profile's runtime version, under the camel trait's, as in Camel K.
		b.RuntimeVersion = strings.TrimSpace(s.profile.Spec.Build.RuntimeVersion)
	}
	if provider != nil {
		// plain-quarkus and quarkus are one provider, and one kit.
		b.RuntimeProvider = provider.Name()
	} else {
		// The caller refuses the platform's provider; its dependencies are camel-main's meanwhile.
		provider = camelruntime.Main
	}
	if v := strings.TrimSpace(s.traits.Camel.RuntimeVersion()); v != "" {
		// The camel trait's runtimeVersion picks the BOM of this integration's kit, as in Camel K.
		b.RuntimeVersion = v
	}
	spec := kit.ForIntegration(deps, impliedDependencies(s.traits, provider), resolved).WithRepositories(s.it.Spec.Repositories...)
	spec.OperatorID = r.OperatorID
	spec.BuildProperties = s.traits.Builder.Properties()
	spec.BuildResources = s.traits.Builder.Resources()
	return spec
}

// provider is the runtime the integration's kit holds: the camel trait's, else the platform's;
// nil when the platform's is none this operator runs.
func (r *Reconciler) provider(s *scope) camelruntime.Provider {
	if p := s.traits.Camel.RuntimeProvider(); p != nil {
		return p
	}
	p, err := camelruntime.ProviderNamed(platform.Resolve(s.platform.Spec).Build.RuntimeProvider)
	if err != nil {
		return nil
	}
	return p
}

// warnUnbuiltDependencies warns, once per generation, that an integration's dependencies are not in
// the image it runs. That image is the container trait's: no kit is built for such an integration,
// so the dependencies would otherwise be dropped without a word. An integration that a Pipe or a
// KameletBinding generated is left out: its dependencies are the Kamelets', not the user's.
func (r *Reconciler) warnUnbuiltDependencies(s *scope) {
	it := s.it
	if len(it.Spec.Dependencies) == 0 || metav1.GetControllerOf(it) != nil ||
		!r.warned.first(client.ObjectKeyFromObject(it), "DependenciesNotBuilt", it.Generation) {
		return
	}
	controller.Event(r.Recorder, it, nil, corev1.EventTypeWarning, "DependenciesNotBuilt", "Reconcile",
		fmt.Sprintf("the container trait's image %s runs as it is, and no kit is built for it: the dependencies %s are not added to it; "+
			"remove them, or remove the image to have a kit built with them",
			s.image, strings.Join(it.Spec.Dependencies, ", ")))
}

// impliedDependencies are the dependencies the traits call for: an HTTP server for a Service,
// the runtime's metrics for the prometheus trait, quartz for the cron trait's fallback.
func impliedDependencies(t trait.Traits, provider camelruntime.Provider) []string {
	var deps []string
	if t.ExposesService() {
		deps = append(deps, "camel:platform-http")
	}
	if t.Prometheus.Enabled() {
		deps = append(deps, provider.Metrics().Dependencies...)
	}
	if t.Cron.Fallback() {
		// The cron component schedules with quartz, as Camel K's fallback does.
		deps = append(deps, "camel:quartz")
	}
	return deps
}

// useKit takes the image of the kit chosen, once it is Ready, after making it when it is to be
// made. A pinned kit that is not this operator's is bad input: nothing is built for it.
func (r *Reconciler) useKit(ctx context.Context, s *scope, c kit.Choice) (reconcile.Result, error) {
	key := client.ObjectKey{Namespace: c.Namespace, Name: c.Name}
	switch {
	case c.Kit == nil && c.Make == nil:
		// The kit's watch brings the integration back if the kit is made later.
		s.Failure = controller.Because(ReasonKitNotFound, fmt.Sprintf(
			"IntegrationKit %s is not one of operator %s's kits: it does not exist, or it is assigned to another operator; "+
				"create it for this operator, or remove spec.integrationKit to have a kit built", key, r.OperatorID))
		return reconcile.Result{}, nil
	case c.Kit == nil:
		s.it.Status.IntegrationKit = &camelv1.KitReference{Namespace: key.Namespace, Name: key.Name}
		s.Waiting = controller.Because(ReasonKitBuilding, c.Why)
		err := r.Client.Create(ctx, c.Make)
		if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
			// Refused by RBAC or an admission policy: an administrator must act (Error, Stalled).
			// An admission policy's denials are Invalid unless the policy says otherwise. The
			// create is tried again now and then, so that the integration recovers once they have
			// acted.
			s.Failure = controller.Because(ReasonKitRefused, fmt.Sprintf(
				"the API server refused to create the kit %s of this integration, so it cannot be built: %v", key.Name, err))
			return reconcile.Result{RequeueAfter: kitRefusedRetry}, nil
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return reconcile.Result{}, fmt.Errorf("creating kit %s: %w", key.Name, err)
		}
		return reconcile.Result{}, nil
	}
	s.it.Status.IntegrationKit = &camelv1.KitReference{Namespace: key.Namespace, Name: key.Name}
	k := c.Kit
	cond := k.Status.GetCondition(camelv1.ConditionReady)
	switch {
	case k.Status.Phase == camelv1.IntegrationKitPhaseReady && k.Status.Image != "":
		provider, err := camelruntime.ProviderNamed(kit.ProviderOf(k))
		if err != nil {
			s.Failure = controller.Because(ReasonInvalidRuntimeProvider, fmt.Sprintf("kit %s holds a runtime this operator cannot start: %v", key.Name, err))
			return reconcile.Result{}, nil
		}
		s.image, s.archive, s.provider = k.Status.Image, kit.HasArchive(k), provider
	case k.Status.Phase == camelv1.IntegrationKitPhaseError && cond != nil:
		s.Failure = controller.Because(controller.Reason(cond.Reason), fmt.Sprintf("kit %s failed: %s", key.Name, cond.Message))
	case cond != nil:
		s.Waiting = controller.Because(ReasonKitNotReady, fmt.Sprintf("kit %s is in phase %q: %s", key.Name, k.Status.Phase, cond.Message))
	default:
		s.Waiting = controller.Because(ReasonKitNotReady, fmt.Sprintf("waiting for kit %s", key.Name))
	}
	return reconcile.Result{}, nil
}

// input is what the children are rendered from. The Kamelets the routes use are mounted as
// sources, and their content is part of the pods' digest: a changed Kamelet rolls them.
func (r *Reconciler) input(s *scope) render.Input {
	in := render.Input{
		Integration: s.it, Traits: s.traits, OperatorID: r.OperatorID,
		Image: s.image, Archive: s.archive, Provider: s.provider, Digest: s.digest, RegistrySecret: s.platform.Spec.Build.Registry.Secret,
		Proxy: r.Proxy, MountedVersions: s.mountedVersions,
	}
	if len(s.kamelets) > 0 {
		it := s.it.DeepCopy()
		it.Spec.Sources = append(it.Spec.Sources, s.kamelets...)
		in.Integration = it
		in.Digest += "-" + render.Hash(s.kamelets)
	}
	return in
}

// reconcileConfigMap applies the sources and properties, or deletes the ConfigMap it made when
// there are none. A sourceless integration without properties has none.
func (r *Reconciler) reconcileConfigMap(ctx context.Context, s *scope) (reconcile.Result, error) {
	cm, err := render.ConfigMap(r.input(s))
	if err != nil {
		s.Failure = controller.Because(ReasonInvalidSource, err.Error())
		return reconcile.Result{}, nil
	}
	if cm == nil {
		return reconcile.Result{}, r.removeChild(ctx, s, render.ConfigMapName(s.it.Name), &corev1.ConfigMap{})
	}
	err = r.applyIfChanged(ctx, s, cm, &corev1.ConfigMap{})
	return reconcile.Result{}, s.failOnNameTaken(err)
}

// reconcileDeployment applies the Deployment. Applying the same object
// over a Deployment another operator made updates it in place: a move
// changes its labels (the owner's id, the applied hash), never the pods
// it runs unless the new owner runs another image, and never recreates
// it.
func (r *Reconciler) reconcileDeployment(ctx context.Context, s *scope) (reconcile.Result, error) {
	in := r.input(s)
	cron, err := render.CronJob(in)
	if err != nil {
		s.Failure = controller.Because(ReasonInvalidSpec, err.Error())
		return reconcile.Result{}, nil
	}
	s.cronJobAvailable, s.cronRead = cronJobAvailable(in.Traits.Cron, cron), true
	if cron != nil {
		return reconcile.Result{}, r.runAsCronJob(ctx, s, cron)
	}
	if err := r.removeChild(ctx, s, s.it.Name, &batchv1.CronJob{}); err != nil {
		return reconcile.Result{}, err
	}
	want, err := render.Deployment(in)
	if err != nil {
		s.Failure = controller.Because(ReasonInvalidSpec, err.Error())
		return reconcile.Result{}, nil
	}
	observed := &appsv1.Deployment{}
	if s.replaceKept {
		// The pods roll as the update strategy says, never below the replicas by default.
		observed, err = controller.ReplaceForeign(ctx, r.Client, r.APIReader, want, r.FieldManager)
		if err != nil {
			return reconcile.Result{}, fmt.Errorf("replacing the Deployment %s that another operator made: %w", want.Name, err)
		}
		s.it.Status.Ownership.Kept = nil
	} else if err := r.applyIfChanged(ctx, s, want, observed); err != nil {
		return reconcile.Result{}, s.failOnNameTaken(err)
	}
	s.deployment = observed
	return reconcile.Result{}, nil
}

// runAsCronJob applies the cron trait's CronJob and removes the Deployment, which it replaces.
func (r *Reconciler) runAsCronJob(ctx context.Context, s *scope, want *batchv1.CronJob) error {
	observed := &batchv1.CronJob{}
	if err := r.applyIfChanged(ctx, s, want, observed); err != nil {
		return s.failOnNameTaken(err)
	}
	s.cronJob = observed
	return r.removeChild(ctx, s, s.it.Name, &appsv1.Deployment{})
}

// reconcileService applies the Service when the integration exposes a
// port, and deletes the one it made when it no longer does.
func (r *Reconciler) reconcileService(ctx context.Context, s *scope) (reconcile.Result, error) {
	want, err := render.Service(r.input(s))
	return reconcileOptionalChild(ctx, r, s, want, err)
}

// reconcilePodDisruptionBudget applies the pdb trait's PodDisruptionBudget, and deletes
// the one it made when the trait is off.
func (r *Reconciler) reconcilePodDisruptionBudget(ctx context.Context, s *scope) (reconcile.Result, error) {
	want, err := render.PodDisruptionBudget(r.input(s))
	return reconcileOptionalChild(ctx, r, s, want, err)
}

// reconcileIngress applies the ingress trait's Ingress, and deletes the one it made when
// the trait is off. An Ingress with no Service to route to is bad input.
func (r *Reconciler) reconcileIngress(ctx context.Context, s *scope) (reconcile.Result, error) {
	want, err := render.Ingress(r.input(s))
	if errors.Is(err, render.ErrIngressWithoutService) {
		s.Failure = controller.Because(ReasonInvalidTrait, err.Error())
		return reconcile.Result{}, nil
	}
	return reconcileOptionalChild(ctx, r, s, want, err)
}

// reconcilePodMonitor applies the prometheus trait's PodMonitor, and deletes the one it
// made when the trait no longer asks for it. Where the cluster does not serve the kind,
// a Warning Event says so, once per generation, and the integration runs without it.
func (r *Reconciler) reconcilePodMonitor(ctx context.Context, s *scope) (reconcile.Result, error) {
	want, err := render.PodMonitor(r.input(s))
	if err != nil {
		s.Failure = controller.Because(ReasonInvalidSpec, err.Error())
		return reconcile.Result{}, nil
	}
	switch {
	case !r.PodMonitors:
		if want != nil && r.warned.first(client.ObjectKeyFromObject(s.it), "PodMonitorNotServed", s.it.Generation) {
			controller.Event(r.Recorder, s.it, nil, corev1.EventTypeWarning, "PodMonitorNotServed", "Reconcile",
				fmt.Sprintf("the prometheus trait asks for a PodMonitor, and the cluster served no %s when operator %s started: "+
					"install the Prometheus Operator's CRDs and restart the operator, or set prometheus.podMonitor: false",
					render.PodMonitorGVK.GroupVersion().WithResource("podmonitors").GroupResource(), r.OperatorID))
		}
		return reconcile.Result{}, nil
	case want != nil:
		return reconcile.Result{}, s.failOnNameTaken(r.applyIfChanged(ctx, s, want, PodMonitorMetadata()))
	default:
		return reconcile.Result{}, r.removeChild(ctx, s, s.it.Name, PodMonitorMetadata())
	}
}

// PodMonitorMetadata is an empty PodMonitor as a metadata-only object: the operator
// caches and reads only the metadata of the PodMonitors it makes.
func PodMonitorMetadata() *metav1.PartialObjectMetadata {
	pm := &metav1.PartialObjectMetadata{}
	pm.SetGroupVersionKind(render.PodMonitorGVK)
	return pm
}

// reconcileOptionalChild applies want, a child render made, or deletes the integration's child of
// that kind when want is nil. The child deleted is the one named like the integration that the
// integration controls. A render error is bad input.
func reconcileOptionalChild[T any, P interface {
	*T
	client.Object
}](ctx context.Context, r *Reconciler, s *scope, want P, err error) (reconcile.Result, error) {
	if err != nil {
		s.Failure = controller.Because(ReasonInvalidSpec, err.Error())
		return reconcile.Result{}, nil
	}
	if want != nil {
		return reconcile.Result{}, s.failOnNameTaken(r.applyIfChanged(ctx, s, want, P(new(T))))
	}
	return reconcile.Result{}, r.removeChild(ctx, s, s.it.Name, P(new(T)))
}

// removeChild deletes the child named name, of obj's kind, when the
// integration controls it: one it made and no longer needs. The lookup
// is cached, so a child that never existed costs no request, unless the
// children may still be a previous owner's.
func (r *Reconciler) removeChild(ctx context.Context, s *scope, name string, obj client.Object) error {
	foreign, err := r.previousOwnersChildren(ctx, s)
	if err != nil {
		return err
	}
	var reader client.Reader = r.Client
	if foreign {
		reader = r.APIReader
	}
	err = reader.Get(ctx, client.ObjectKey{Namespace: s.it.Namespace, Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !metav1.IsControlledBy(obj, s.it) {
		return nil
	}
	if err := r.takeOver(ctx, obj); err != nil {
		return err
	}
	uid := obj.GetUID()
	return client.IgnoreNotFound(r.Client.Delete(ctx, obj, client.Preconditions{UID: &uid}))
}

// takeOver labels with this operator's id a child a previous owner labelled, before this operator
// deletes it. The confinement policy lets an operator delete only what is labelled with its own id.
func (r *Reconciler) takeOver(ctx context.Context, obj client.Object) error {
	if obj.GetLabels()[camelv1.OperatorIDLabel] == r.OperatorID {
		return nil
	}
	if err := controller.PatchLabel(ctx, r.Client, obj, r.OperatorID); err != nil {
		return fmt.Errorf("taking %s over from the integration's previous owner: %w", obj.GetName(), err)
	}
	return nil
}

// previousOwnersChildren tells whether the integration's children may still be a previous owner's.
// Such children carry that operator's id, so this operator's cache, filtered by its own, does not
// hold them, and a child this one no longer makes (a Service whose port went while the integration
// moved) must be looked up in the API server. That is the case after a handover until this operator
// has applied the Deployment (or the cron trait's CronJob), which the steps do last: a lookup or a
// removal that fails is retried before it. Looking costs a cached read.
func (r *Reconciler) previousOwnersChildren(ctx context.Context, s *scope) (bool, error) {
	if s.it.Status.Ownership.Epoch <= 1 {
		return false, nil
	}
	for _, workload := range []client.Object{&appsv1.Deployment{}, &batchv1.CronJob{}} {
		err := r.Client.Get(ctx, client.ObjectKeyFromObject(s.it), workload)
		if !apierrors.IsNotFound(err) {
			return false, err
		}
	}
	return true, nil
}

// applyIfChanged applies want unless the cached object already carries
// want's hash, which render stamps on every child's labels. observed is then the
// object as cached or, when applied, as the API server stored it (status
// included: a Deployment whose metadata alone changed, on a move, is
// still rolled out). A child of an integration that ran before and is not
// in the cache is looked up: it was moved with the integration, or taken
// by another operator (see reclaim).
func (r *Reconciler) applyIfChanged(ctx context.Context, s *scope, want, observed client.Object) error {
	key := client.ObjectKeyFromObject(want)
	err := r.Client.Get(ctx, key, observed)
	if apierrors.IsNotFound(err) && s.it.Status.Replicas != nil {
		switch err = r.APIReader.Get(ctx, key, observed); {
		case err == nil:
			return r.reclaim(ctx, s, want, observed)
		case !apierrors.IsNotFound(err):
			return err
		}
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err == nil && observed.GetLabels()[render.AppliedHashLabel] == want.GetLabels()[render.AppliedHashLabel] {
		return nil
	}
	cfg, err := apply.Configuration(want)
	if err != nil {
		return err
	}
	err = r.Client.Apply(ctx, cfg, client.FieldOwner(r.FieldManager))
	if apierrors.IsConflict(err) {
		// Someone else (kubectl scale, say) manages some of the fields.
		// Take them over, but only on an object this integration controls.
		if err = r.APIReader.Get(ctx, key, observed); err == nil {
			err = r.forceApply(ctx, cfg, want, observed)
		}
	}
	if err != nil {
		return fmt.Errorf("applying %T %s: %w", want, want.GetName(), err)
	}
	return apply.Stored(cfg, observed)
}

// forceApply applies cfg, taking over the fields others manage, to
// observed (as the API server has it) when this integration controls it.
func (r *Reconciler) forceApply(ctx context.Context, cfg runtime.ApplyConfiguration, want, observed client.Object) error {
	if err := controlledLikeWant(want, observed); err != nil {
		return err
	}
	return r.Client.Apply(ctx, cfg, client.FieldOwner(r.FieldManager), client.ForceOwnership)
}

// controlledLikeWant refuses observed, an existing object of want's name,
// unless the integration that controls want controls it too.
func controlledLikeWant(want, observed client.Object) error {
	owner := want.GetOwnerReferences()[0]
	if c := metav1.GetControllerOf(observed); c == nil || c.UID != owner.UID {
		return fmt.Errorf("%w: it exists and is not controlled by integration %s; rename the integration or remove the object",
			errNotOurs, owner.Name)
	}
	return nil
}

// reclaim applies want over observed, a child of the integration that
// this operator's cache does not hold, as the API server has it. Labelled
// with this operator's id (the cache lags), with none, or with the
// previous owner's, it is applied taking over the fields others manage,
// which keeps its pods on a move. Labelled with another operator's, that
// operator took it, which the confinement policy cannot refuse (it cannot
// read the integration to tell a move from a theft): it is replaced by
// what this operator renders, which drops whatever the other wrote, and a
// Warning Event says so.
func (r *Reconciler) reclaim(ctx context.Context, s *scope, want, observed client.Object) error {
	cfg, err := apply.Configuration(want)
	if err != nil {
		return err
	}
	from := observed.GetLabels()[camelv1.OperatorIDLabel]
	if from == "" || from == r.OperatorID || from == s.it.Status.Ownership.Previous {
		if err := r.forceApply(ctx, cfg, want, observed); err != nil {
			return fmt.Errorf("applying %T %s: %w", want, want.GetName(), err)
		}
		return apply.Stored(cfg, observed)
	}
	if err := controlledLikeWant(want, observed); err != nil {
		return err
	}
	kind := reflect.TypeOf(want).Elem().Name()
	want.SetResourceVersion(observed.GetResourceVersion())
	if err := r.Client.Update(ctx, want, client.FieldOwner(r.FieldManager)); err != nil {
		return fmt.Errorf("restoring %s %s, which operator %s took: %w", kind, want.GetName(), from, err)
	}
	controller.Event(r.Recorder, s.it, nil, corev1.EventTypeWarning, ReasonChildTakenBack, "Reconcile",
		fmt.Sprintf("%s %s was labelled for operator %s, which neither owns this integration nor handed it over: restored as operator %s renders it",
			kind, want.GetName(), from, r.OperatorID))
	ctrl.LoggerFrom(ctx).Info("Restored a child another operator took", "kind", kind, "name", want.GetName(), "operator", from)
	return r.APIReader.Get(ctx, client.ObjectKeyFromObject(want), observed)
}

// failOnNameTaken turns a child name taken by a foreign object into bad
// input the user must resolve; other errors are returned for a retry.
func (s *scope) failOnNameTaken(err error) error {
	if errors.Is(err, errNotOurs) {
		s.Failure = controller.Because(ReasonNameConflict, err.Error())
		return nil
	}
	return err
}
