package integrationcontroller

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/catalog"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/inspect"
	"github.com/caravan-dev/caravan/internal/kamelet"
	"github.com/caravan-dev/caravan/internal/pipe"
	"github.com/caravan-dev/caravan/internal/render"
)

// kameletRetry is how soon an integration whose Kamelet is missing looks again: Kamelets outside
// the operator's namespace are not watched.
const kameletRetry = 10 * time.Second

// missingKameletRetry is how soon an integration that runs without a Kamelet of the cluster, which
// its runtime is to find on the classpath, looks for it in the cluster again.
const missingKameletRetry = time.Minute

// ConditionKameletsAvailable, on an integration whose routes use Kamelets, tells whether the
// cluster holds them all (True) or the runtime is to find some on its classpath (Unknown), as on
// Camel K.
const ConditionKameletsAvailable = "KameletsAvailable"

// setKameletsAvailable sets KameletsAvailable from what reconcileRoutes found, and removes it from
// an integration whose routes use no Kamelet. A reconcile that did not read the routes leaves it.
func setKameletsAvailable(s *scope) {
	st := &s.it.Status
	switch {
	case !s.routesRead:
	case len(s.kameletsMissing) > 0:
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ConditionKameletsAvailable, Status: metav1.ConditionUnknown,
			Reason: string(ReasonKameletNotFound), ObservedGeneration: s.it.Generation, Message: fmt.Sprintf(
				"the Kamelets %s are in neither namespace %s nor %s: the runtime looks for them on its classpath, where a dependency "+
					"such as mvn:org.apache.camel.kamelets:camel-kamelets brings them; create them, or fix their names, if none does",
				strings.Join(s.kameletsMissing, ", "), s.it.Namespace, s.operatorNamespace)})
	case len(s.kamelets) > 0:
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ConditionKameletsAvailable, Status: metav1.ConditionTrue,
			Reason: "KameletsFound", ObservedGeneration: s.it.Generation, Message: "the cluster holds every Kamelet the routes use"})
	default:
		meta.RemoveStatusCondition(&st.Conditions, ConditionKameletsAvailable)
	}
}

// reconcileRoutes reads what the routes use: the modules their kit needs, and the Kamelets they
// name. Each Kamelet that no source of the integration holds (a Pipe's integration holds its
// own) is looked up in the integration's namespace, then in the operator's; it is mounted with
// the sources, where the runtime finds it, and its dependencies go into the kit. Whether the
// routes or their Kamelets serve HTTP goes into the traits, for the service trait's auto mode.
func (r *Reconciler) reconcileRoutes(ctx context.Context, s *scope) (reconcile.Result, error) {
	spec, res, err := r.resolvedSources(ctx, s)
	if spec == nil {
		return res, err
	}
	routes, err := inspect.Integration(catalog.Camel(), spec)
	if kebab := routes.KebabCaseError(); kebab != nil {
		s.Failure = controller.Because(ReasonInvalidSource, kebab.Error())
		return reconcile.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx).V(1)
	if err != nil {
		log.Info("Some sources could not be inspected for the components they use", "error", err.Error())
	}
	if len(routes.Unknown) > 0 {
		log.Info("The routes use URI schemes the catalog does not know", "schemes", routes.Unknown)
	}
	s.routeDependencies = routes.Dependencies
	s.routesRead, s.operatorNamespace = true, r.Namespace
	serves := routes.ServesHTTP
	defer func() { s.traits = s.traits.WithHTTPRoutes(serves).WithConsumers(routes.Consumers) }()
	// The kamelets trait picks them: those the routes use, those it lists, or none.
	for _, name := range s.traits.Kamelets.Mounted(routes.Kamelets) {
		source := name + render.KameletSuffix
		if slices.ContainsFunc(s.it.Spec.Sources, func(src camelv1.SourceSpec) bool { return src.Name == source }) {
			continue
		}
		k, err := r.kamelet(ctx, s.it.Namespace, name)
		if apierrors.IsNotFound(err) {
			// As on Camel K, the runtime looks for it on the classpath, where a dependency (the
			// camel-kamelets artifact, say) may bring it.
			s.kameletsMissing = append(s.kameletsMissing, name)
			continue
		}
		if err != nil {
			return reconcile.Result{}, fmt.Errorf("reading the Kamelet %s: %w", name, err)
		}
		if k, err = kameletVersion(k, routes.KameletVersions[name]); err != nil {
			s.Failure = controller.Because(ReasonKameletInvalid, err.Error())
			return reconcile.Result{}, nil
		}
		if k.Status.Phase == camelv1.KameletPhaseError {
			s.Failure = controller.Because(ReasonKameletInvalid, fmt.Sprintf("the routes use the Kamelet %s/%s, which is invalid: %s",
				k.Namespace, name, kameletError(k)))
			return reconcile.Result{}, nil
		}
		sources, err := kameletSources(k, s.it.Spec.Sources, s.kamelets)
		if err != nil {
			s.Failure = controller.Because(ReasonKameletInvalid, err.Error())
			return reconcile.Result{}, nil
		}
		// A Kamelet whose template serves HTTP, as a webhook source does, or whose sources do; the
		// modules of its sources go into the kit, those of its template are its dependencies.
		template, _ := inspect.Integration(catalog.Camel(), &camelv1.IntegrationSpec{Sources: sources[:1]})
		extra, _ := inspect.Integration(catalog.Camel(), &camelv1.IntegrationSpec{Sources: sources[1:]})
		serves = serves || template.ServesHTTP || extra.ServesHTTP
		s.routeDependencies = append(s.routeDependencies, extra.Dependencies...)
		s.kamelets = append(s.kamelets, sources...)
		s.routeDependencies = append(s.routeDependencies, k.Spec.Dependencies...)
	}
	return reconcile.Result{}, nil
}

// kameletSources are the sources Kamelet k adds to an integration whose own sources are
// integration and whose other Kamelets' are others; a name two of them share is an error.
func kameletSources(k *camelv1.Kamelet, integration, others []camelv1.SourceSpec) ([]camelv1.SourceSpec, error) {
	sources, err := pipe.KameletSources(k)
	if err != nil {
		return nil, fmt.Errorf("the Kamelet %s/%s cannot be mounted: %w", k.Namespace, k.Name, err)
	}
	for _, src := range sources[1:] {
		named := func(o camelv1.SourceSpec) bool { return o.Name == src.Name }
		if slices.ContainsFunc(integration, named) || slices.ContainsFunc(others, named) {
			return nil, fmt.Errorf("the Kamelet %s/%s has a source %s, the name of another source of the integration", k.Namespace, k.Name, src.Name)
		}
	}
	return sources, nil
}

// kameletVersion is k in the version the routes name (kameletVersion=V), its main one without: an
// integration mounts one version of a Kamelet, so routes that name two are refused.
func kameletVersion(k *camelv1.Kamelet, versions []string) (*camelv1.Kamelet, error) {
	switch len(versions) {
	case 0:
		return k, nil
	case 1:
		return kamelet.WithVersion(k, versions[0])
	}
	return nil, fmt.Errorf("the routes name the versions %s of kamelet %s: an integration runs one version of a Kamelet", strings.Join(versions, ", "), k.Name)
}

// kamelet reads the Kamelet name: the integration's namespace's, from the API server (Kamelets of
// the cluster are not cached), else the operator's namespace's, from the cache.
func (r *Reconciler) kamelet(ctx context.Context, namespace, name string) (*camelv1.Kamelet, error) {
	k := &camelv1.Kamelet{}
	if namespace != r.Namespace {
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, k)
		if !apierrors.IsNotFound(err) {
			return k, err
		}
	}
	return k, r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: name}, k)
}

// kameletError is what a Kamelet in Error says of itself.
func kameletError(k *camelv1.Kamelet) string {
	var msgs []string
	for _, c := range k.Status.Conditions {
		if c.Status == metav1.ConditionFalse && c.Message != "" {
			msgs = append(msgs, c.Message)
		}
	}
	if len(msgs) == 0 {
		return "see kubectl describe kamelet -n " + k.Namespace + " " + k.Name
	}
	return strings.Join(msgs, "; ")
}

// resolvedSources is the integration's spec with the content of each contentRef source read from
// its ConfigMap, for the routes to be inspected. A missing ConfigMap or key makes the integration
// wait (ConfigMaps of the namespace are not watched): nil is returned then.
func (r *Reconciler) resolvedSources(ctx context.Context, s *scope) (*camelv1.IntegrationSpec, reconcile.Result, error) {
	spec := &s.it.Spec
	for i, src := range spec.Sources {
		if src.ContentRef == "" {
			continue
		}
		if spec == &s.it.Spec {
			spec = s.it.Spec.DeepCopy()
		}
		key := cmp.Or(src.ContentKey, render.DefaultContentKey)
		cm := &corev1.ConfigMap{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: s.it.Namespace, Name: src.ContentRef}, cm)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, reconcile.Result{}, fmt.Errorf("reading the ConfigMap %s of source %s: %w", src.ContentRef, src.Name, err)
		}
		content, ok := cm.Data[key]
		if !ok {
			s.Waiting = controller.Because(ReasonSourceNotFound, fmt.Sprintf(
				"the source %s is the key %s of the ConfigMap %s/%s, which does not exist: create it", src.Name, key, s.it.Namespace, src.ContentRef))
			return nil, reconcile.Result{RequeueAfter: kameletRetry}, nil
		}
		spec.Sources[i].Content, spec.Sources[i].ContentRef = content, ""
	}
	return spec, reconcile.Result{}, nil
}
