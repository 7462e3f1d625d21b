package operator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/controller/kameletcontroller"
	"github.com/caravan-dev/caravan/internal/controller/mirrorcontroller"
	"github.com/caravan-dev/caravan/internal/controller/orphancontroller"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/metrics"
)

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingadmissionpolicies;mutatingadmissionpolicybindings,verbs=get
// +kubebuilder:rbac:groups=camel.apache.org,resources=integrations,verbs=create

// defaultPoll is how often an operator without the metadata watch checks whether it became the
// default operator. The default operator needs the watch. Every mirrorPolls polls, it also checks
// that the API server still mirrors the label (the admission policies may be uninstalled).
const (
	defaultPoll = 5 * time.Second
	mirrorPolls = 6
)

// clusterDuties are the controllers that read the metadata of every resource of the cluster, not
// the operator's share. They are the label mirror (moves and adoption), the Kamelet label mirror
// and the orphan marks, on one metadata-only cache.
//
// The default operator always runs them: it adopts unassigned resources and marks orphans. Any
// other operator runs them only when the API server does not mirror the operator-id label itself
// (the admission policy that `caravan install` installs, docs/architecture.md, Authorisation): then
// each operator mirrors the label of the resources moved to it. When the API server does, the other
// operators watch, beyond their share, only the resources that have no label (written before the
// policy took effect), so that the cost of an operator follows its share and not the size of the
// cluster.
type clusterDuties struct {
	mgr    ctrl.Manager
	direct client.Client
	// registrations judges other operators for an operator that does not watch their registrations.
	// The metadata cache of every resource also watches every registration.
	registrations controller.Liveness
	reg           *Registrar
	o             Options

	once sync.Once
	err  error
	// probeMu guards probedVersion, the resourceVersions of the label policy
	// and its binding when the label probe last ran, and probed, its answer.
	probeMu       sync.Mutex
	probedVersion string
	probed        bool
	// meta is the metadata cache, once the duties run.
	meta atomic.Pointer[cache.Cache]
}

// setup starts the duties now, or, when the API server mirrors the label
// and this operator is not the default one, once it becomes the default.
func (d *clusterDuties) setup(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx)
	watching := metrics.NewClusterWatch(d.o.ID, func() bool { return d.meta.Load() != nil })
	if err := ctrlmetrics.Registry.Register(watching); err != nil {
		return err
	}
	mirrored, err := d.labelsMirrored(ctx)
	if err != nil {
		// Without the right to look, behave as if it did not: each
		// operator mirrors the label of its own resources.
		log.Info("Could not tell whether the API server mirrors the operator-id label; mirroring it here", "error", err.Error())
	}
	if !mirrored || d.reg.IsDefault() {
		return d.start(ctx)
	}
	log.Info("The API server mirrors the operator-id label: watching this operator's share and unlabelled resources only, until it becomes the default operator")
	if err := d.startUnlabelled(ctx); err != nil {
		return err
	}
	return d.mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		t := time.NewTicker(defaultPoll)
		defer t.Stop()
		for tick := 1; ; tick++ {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
			if d.reg.IsDefault() {
				log.Info("Became the default operator: taking on adoption and orphan marks")
				return d.start(ctx)
			}
			if tick%mirrorPolls != 0 {
				continue
			}
			if mirrored, err := d.labelsMirrored(ctx); err == nil && !mirrored {
				log.Info("The API server no longer mirrors the operator-id label: mirroring it here")
				return d.start(ctx)
			}
		}
	}))
}

// start sets up the metadata cache and the controllers that read it, once.
func (d *clusterDuties) start(ctx context.Context) error {
	d.once.Do(func() { d.err = d.startOnce(ctx) })
	return d.err
}

// startUnlabelled mirrors the label of the resources assigned to this operator that have none.
// Those were written before the admission policy was installed, or in the moment before it took
// effect. A server-side selector keeps that watch to the unlabelled resources, which the policy
// makes rare.
func (d *clusterDuties) startUnlabelled(ctx context.Context) error {
	_, err := d.mirrorOn(ctx, true)
	return err
}

func (d *clusterDuties) startOnce(ctx context.Context) error {
	metaCache, err := d.mirrorOn(ctx, false)
	if err != nil {
		return err
	}
	d.meta.Store(&metaCache)
	return nil
}

// mirrorOn starts a metadata cache, of every resource of the mirrored
// kinds or of the unlabelled ones only, and the label mirrors that read
// it. The cache of every resource also serves adoption and the orphan
// controller, and watches every registration for them and the mirrors.
func (d *clusterDuties) mirrorOn(ctx context.Context, unlabelledOnly bool) (cache.Cache, error) {
	mgr, o := d.mgr, d.o
	metaCache, err := mirrorcontroller.NewCache(mgr, namespaces(o.Namespace, o.WatchNamespaces), unlabelledOnly)
	if err != nil {
		return nil, err
	}
	name, isDefault := "mirror", d.reg.IsDefault
	var registrations controller.Liveness = controller.WatchedRegistrations{Reader: metaCache, Clock: clock.RealClock{}}
	if unlabelledOnly {
		// Adoption is the default operator's, on the cache of every resource.
		name, isDefault, registrations = "mirror-unlabelled", func() bool { return false }, d.registrations
	} else if err := (&orphancontroller.Reconciler{
		Meta: metaCache, Client: d.direct, APIReader: mgr.GetAPIReader(),
		IsDefault: d.reg.IsDefault, Clock: clock.RealClock{},
	}).SetupWithManager(ctx, mgr, controller.Unwrapped); err != nil {
		// Its indexes go on the metadata cache before it starts.
		return nil, fmt.Errorf("orphan controller: %w", err)
	}
	if err := mgr.Add(metaCache); err != nil {
		return nil, err
	}
	if err := mirrorcontroller.SetupMirrors(mgr, metaCache, mirrorcontroller.Reconciler{
		Client: d.direct, Reader: metaCache, Registrations: registrations, OperatorID: o.ID, IsDefault: isDefault,
	}, name); err != nil {
		return nil, fmt.Errorf("mirror controller: %w", err)
	}
	if err := kameletcontroller.SetupLabelMirror(mgr, metaCache, d.direct, registrations, o.ID, name); err != nil {
		return nil, fmt.Errorf("kamelet mirror controller: %w", err)
	}
	return metaCache, nil
}

// errNoMetadata is the answer of the metadata reader of an operator that
// does not keep the metadata watch.
var errNoMetadata = errors.New("this operator does not watch the metadata of the cluster's resources")

// Get reads from the metadata cache, for the share metrics.
func (d *clusterDuties) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c := d.meta.Load()
	if c == nil {
		return errNoMetadata
	}
	return (*c).Get(ctx, key, obj, opts...)
}

// List lists from the metadata cache, for the share metrics.
func (d *clusterDuties) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c := d.meta.Load()
	if c == nil {
		return errNoMetadata
	}
	return (*c).List(ctx, list, opts...)
}

// labelsMirrored reports whether the API server mirrors the operator-id label of every assignable
// kind and of Kamelets. It does when the label policy that `caravan install` installs exists, with
// a binding that narrows it to no namespace or object, matches them, and acts: a server-side dry
// run of an Integration assigned to this operator comes back labelled (the policy's objects can
// exist on a server that does not apply them, or be edited so that they never match). The dry run's
// answer is kept until the policy or its binding changes.
func (d *clusterDuties) labelsMirrored(ctx context.Context) (bool, error) {
	binding := &admissionv1.MutatingAdmissionPolicyBinding{}
	policy := &admissionv1.MutatingAdmissionPolicy{}
	for _, obj := range []client.Object{binding, policy} {
		err := d.direct.Get(ctx, client.ObjectKey{Name: install.LabelPolicy}, obj)
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			// Absent, or a kind the API server does not serve (Kubernetes before 1.36).
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	if binding.Spec.PolicyName != install.LabelPolicy || !bindsEverything(binding) || policy.Spec.MatchConstraints == nil {
		return false, nil
	}
	var resources []string
	for _, rule := range policy.Spec.MatchConstraints.ResourceRules {
		resources = append(resources, rule.Resources...)
	}
	for _, want := range install.LabelMirroredResources {
		if !slices.Contains(resources, want) && !slices.Contains(resources, "*") {
			return false, nil
		}
	}
	version := policy.ResourceVersion + "/" + binding.ResourceVersion
	d.probeMu.Lock()
	defer d.probeMu.Unlock()
	if d.probedVersion == version {
		return d.probed, nil
	}
	probe := &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{
		Namespace: probeNamespace(d.o), Name: "caravan-label-probe-" + d.o.ID,
		Annotations: map[string]string{camelv1.OperatorIDAnnotation: d.o.ID},
	}}
	if err := d.direct.Create(ctx, probe, client.DryRunAll); err != nil {
		return false, fmt.Errorf("dry run of an Integration assigned to %s: %w", d.o.ID, err)
	}
	d.probedVersion, d.probed = version, probe.Labels[camelv1.OperatorIDLabel] == d.o.ID
	return d.probed, nil
}

// bindsEverything tells whether a binding leaves its policy's match
// constraints as they are: no namespace or object selector, no rules.
func bindsEverything(b *admissionv1.MutatingAdmissionPolicyBinding) bool {
	m := b.Spec.MatchResources
	if m == nil {
		return true
	}
	empty := func(s *metav1.LabelSelector) bool {
		return s == nil || (len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0)
	}
	return empty(m.NamespaceSelector) && empty(m.ObjectSelector) && len(m.ResourceRules) == 0 && len(m.ExcludeResourceRules) == 0
}

// probeNamespace is where the label probe is dry-run: the operator's
// namespace, unless it serves only others.
func probeNamespace(o Options) string {
	if len(o.WatchNamespaces) == 0 || slices.Contains(o.WatchNamespaces, o.Namespace) {
		return o.Namespace
	}
	return o.WatchNamespaces[0]
}
