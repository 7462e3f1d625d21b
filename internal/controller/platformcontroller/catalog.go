package platformcontroller

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/apply"
	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/kameletcatalog"
	"github.com/caravan-dev/caravan/internal/kit"
	"github.com/caravan-dev/caravan/internal/platform"
)

// +kubebuilder:rbac:groups=camel.apache.org,resources=kamelets,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=camel.apache.org,resources=integrationkits,verbs=get;list;watch;create

// ConditionKameletCatalogAvailable tells whether the Kamelet catalog of the platform's Camel version
// is installed in the operator's namespace, as Camel K's condition of that name does.
const ConditionKameletCatalogAvailable = "KameletCatalogAvailable"

// CatalogLabel marks the kit that holds a platform's Kamelet catalog, with the catalog's version.
const CatalogLabel = "caravan.dev/kamelet-catalog"

// catalogRetry is how soon an install that failed on the registry is tried again.
const catalogRetry = 30 * time.Second

// installs remembers the outcome of the catalog installed from each kit image since the operator
// started: a Ready kit is read and applied once, then again only when the operator restarts.
type installs struct {
	mu   sync.Mutex
	done map[string]metav1.Condition
}

// forget drops every outcome, so that the next reconcile installs the catalog again.
func (i *installs) forget() {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.done = nil
}

func (i *installs) get(image string) (metav1.Condition, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	c, ok := i.done[image]
	return c, ok
}

func (i *installs) put(image string, c metav1.Condition) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.done == nil {
		i.done = map[string]metav1.Condition{}
	}
	i.done[image] = c
}

// reconcileKameletCatalog installs the Kamelet catalog of the platform's Camel version, unless the
// platform opts out: a kit of the operator resolves camel-kamelets with Maven, and once it is
// Ready, the Kamelets of the jar in its image are applied to the operator's namespace by
// kameletcatalog's rules.
func (r *Reconciler) reconcileKameletCatalog(ctx context.Context, s *scope) (reconcile.Result, error) {
	s.catalogChecked = true
	if r.SkipCatalog || !s.settings.Kamelet.CatalogEnabled() {
		return reconcile.Result{}, nil
	}
	version := s.settings.Build.RuntimeVersion
	if config, err := platform.BuildConfigurationOf(s.settings.Build); err != nil || config.Strategy != build.StrategyPod {
		s.catalog = catalogCondition(metav1.ConditionFalse, ReasonCatalogNeedsPodBuilds, fmt.Sprintf(
			"Maven resolves the Kamelet catalog %s in a builder pod, and the platform's builds are not pod builds: "+
				"set spec.build.buildConfiguration.strategy to pod, or spec.kamelet.catalog to false", version))
		return reconcile.Result{}, nil
	}
	spec := kit.ForIntegration([]string{kameletcatalog.Dependency(version)}, nil, *s.settings)
	spec.OperatorID = r.OperatorID
	k := &camelv1.IntegrationKit{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: spec.Name()}, k)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, r.createCatalogKit(ctx, s, spec, version)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	switch k.Status.Phase {
	case camelv1.IntegrationKitPhaseReady:
	case camelv1.IntegrationKitPhaseError:
		s.catalog = catalogCondition(metav1.ConditionFalse, ReasonCatalogKitFailed, fmt.Sprintf(
			"the kit %s, which resolves the Kamelet catalog %s with Maven, failed: %s", k.Name, version, kitMessage(k)))
		return reconcile.Result{}, nil
	default:
		s.catalog = building(k.Name, version)
		return reconcile.Result{}, nil
	}
	if c, ok := r.installed.get(k.Status.Image); ok {
		s.catalog = &c
		return reconcile.Result{}, nil
	}
	c, retry := r.installCatalog(ctx, s, k, version)
	s.catalog = &c
	if retry {
		return reconcile.Result{RequeueAfter: catalogRetry}, nil
	}
	r.installed.put(k.Status.Image, c)
	return reconcile.Result{}, nil
}

// createCatalogKit creates the kit of the catalog, which the kit controller builds.
func (r *Reconciler) createCatalogKit(ctx context.Context, s *scope, spec kit.Spec, version string) error {
	k, err := spec.Resource(r.Namespace)
	if err != nil {
		return fmt.Errorf("the kit of the Kamelet catalog %s: %w", version, err)
	}
	k.Labels[CatalogLabel] = version
	if err := r.Client.Create(ctx, k); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the kit of the Kamelet catalog %s: %w", version, err)
	}
	s.catalog = building(k.Name, version)
	return nil
}

// installCatalog reads the catalog's jar from the kit's image and applies its Kamelets. retry is
// set when the registry could not be read, which a later attempt may.
func (r *Reconciler) installCatalog(ctx context.Context, s *scope, k *camelv1.IntegrationKit, version string) (c metav1.Condition, retry bool) {
	started := time.Now()
	kamelets, err := r.readCatalog(ctx, s, k, version)
	if err != nil {
		return *catalogCondition(metav1.ConditionFalse, ReasonCatalogUnreadable, fmt.Sprintf(
			"reading the Kamelet catalog %s from the image of kit %s: %v", version, k.Name, err)), true
	}
	existing := &camelv1.KameletList{}
	if err := r.APIReader.List(ctx, existing, client.InNamespace(r.Namespace)); err != nil {
		return *catalogCondition(metav1.ConditionFalse, ReasonCatalogUnreadable, fmt.Sprintf("listing the Kamelets of %s: %v", r.Namespace, err)), true
	}
	byName := map[string]*camelv1.Kamelet{}
	for i := range existing.Items {
		byName[existing.Items[i].Name] = &existing.Items[i]
	}
	counts := map[kameletcatalog.Verdict]int{}
	var failed []string
	for _, km := range kamelets {
		existing := byName[km.Name]
		verdict := kameletcatalog.Judge(existing, km, version)
		km.Namespace = r.Namespace
		var err error
		switch verdict {
		case kameletcatalog.Apply:
			err = ApplyKamelet(ctx, r.Client, km)
		case kameletcatalog.ReplaceStarter:
			err = ReplaceKamelet(ctx, r.Client, r.APIReader, existing, km)
		}
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", km.Name, err))
			continue
		}
		counts[verdict]++
	}
	msg := fmt.Sprintf("the Kamelet catalog %s is installed in %s in %s: %d Kamelets applied", version, r.Namespace,
		time.Since(started).Round(100*time.Millisecond), counts[kameletcatalog.Apply])
	for _, v := range []kameletcatalog.Verdict{kameletcatalog.ReplaceStarter, kameletcatalog.Current,
		kameletcatalog.KeptUserMade, kameletcatalog.KeptUserChanged, kameletcatalog.KeptNewer} {
		if counts[v] > 0 {
			msg += fmt.Sprintf(", %d %s", counts[v], v)
		}
	}
	if len(failed) > 0 {
		return *catalogCondition(metav1.ConditionFalse, ReasonCatalogIncomplete, fmt.Sprintf("%s; %d failed: %s", msg, len(failed), strings.Join(failed, "; "))), true
	}
	return *catalogCondition(metav1.ConditionTrue, ReasonCatalogInstalled, msg), false
}

// readCatalog pulls the kit's image and reads the Kamelets of the catalog's jar in it.
func (r *Reconciler) readCatalog(ctx context.Context, s *scope, k *camelv1.IntegrationKit, version string) ([]*camelv1.Kamelet, error) {
	var jar string
	for _, a := range k.Status.Artifacts {
		if strings.HasSuffix(a.Target, "/"+kameletcatalog.JarName(version)) || strings.HasSuffix(a.Target, "."+kameletcatalog.JarName(version)) {
			jar = a.Target
		}
	}
	if jar == "" {
		return nil, fmt.Errorf("the kit lists no %s", kameletcatalog.JarName(version))
	}
	access, waiting, err := controller.ReadRegistry(ctx, r.APIReader, r.Namespace, r.OperatorID, s.settings.Build.Registry)
	if err == nil && waiting != nil {
		err = fmt.Errorf("%s", waiting.Message)
	}
	if err != nil {
		return nil, err
	}
	img, err := image.Pull(ctx, access.Registry, k.Status.Image)
	if err != nil {
		return nil, err
	}
	content, ok, err := image.ReadFile(img, jar)
	if err == nil && !ok {
		err = fmt.Errorf("the image holds no %s", jar)
	}
	if err != nil {
		return nil, err
	}
	return kameletcatalog.Read(content, version)
}

// beforeFirstApply is the field manager the API server gives fields no manager owned when an apply came.
const beforeFirstApply = "before-first-apply"

// ApplyKamelet applies a Kamelet of the catalog with the catalog's field manager.
func ApplyKamelet(ctx context.Context, c client.Client, k *camelv1.Kamelet) error {
	k.TypeMeta = metav1.TypeMeta{APIVersion: camelv1.GroupVersion.String(), Kind: "Kamelet"}
	u, err := apply.Configuration(k)
	if err != nil {
		return err
	}
	return c.Apply(ctx, u, client.FieldOwner(kameletcatalog.FieldManager), client.ForceOwnership)
}

// ReplaceKamelet puts the catalog's k in place of old, a Kamelet of an earlier installer, without
// deleting it, so that what binds it never finds it missing: an update, if old is unchanged since
// it was read, writes k's spec and clears the installer's field ownership; the catalog's apply
// then owns the fields, and the API server's "before-first-apply" entry for those it found unowned
// is dropped, so that the catalog's field manager is the only one. reader reads the Kamelet with
// its managed fields, which a cache strips.
func ReplaceKamelet(ctx context.Context, c client.Client, reader client.Reader, old, k *camelv1.Kamelet) error {
	next := old.DeepCopy()
	next.Spec = k.Spec
	next.Labels, next.Annotations = maps.Clone(k.Labels), maps.Clone(k.Annotations)
	// One empty entry has the API server drop every manager's fields.
	next.ManagedFields = []metav1.ManagedFieldsEntry{{}}
	if err := c.Update(ctx, next, client.FieldOwner(kameletcatalog.FieldManager)); err != nil {
		return fmt.Errorf("replacing the installer's Kamelet: %w", err)
	}
	if err := ApplyKamelet(ctx, c, k); err != nil {
		return err
	}
	if err := reader.Get(ctx, client.ObjectKeyFromObject(old), next); err != nil {
		return err
	}
	next.ManagedFields = slices.DeleteFunc(next.ManagedFields, func(f metav1.ManagedFieldsEntry) bool {
		return f.Manager == beforeFirstApply
	})
	if err := c.Update(ctx, next, client.FieldOwner(kameletcatalog.FieldManager)); err != nil {
		return fmt.Errorf("handing the installer's Kamelet to the catalog: %w", err)
	}
	return nil
}

// setCatalog sets KameletCatalogAvailable as the catalog step found it, and removes it from a
// platform that opts out. A reconcile that did not reach the step leaves it as it was.
func setCatalog(s *scope) {
	conds := &s.itp.Status.Conditions
	switch {
	case !s.catalogChecked:
	case s.catalog == nil:
		meta.RemoveStatusCondition(conds, ConditionKameletCatalogAvailable)
	default:
		c := *s.catalog
		c.ObservedGeneration = s.itp.Generation
		meta.SetStatusCondition(conds, c)
	}
}

func catalogCondition(status metav1.ConditionStatus, reason controller.Reason, msg string) *metav1.Condition {
	return &metav1.Condition{Type: ConditionKameletCatalogAvailable, Status: status, Reason: string(reason), Message: msg}
}

func building(kitName, version string) *metav1.Condition {
	return catalogCondition(metav1.ConditionUnknown, ReasonCatalogBuilding, fmt.Sprintf(
		"the kit %s resolves the Kamelet catalog %s (camel-kamelets) with Maven", kitName, version))
}

// kitMessage is what a kit in error says of itself.
func kitMessage(k *camelv1.IntegrationKit) string {
	if c := meta.FindStatusCondition(k.Status.Conditions, camelv1.ConditionReady); c != nil && c.Message != "" {
		return c.Message
	}
	return "see kubectl describe integrationkit -n " + k.Namespace + " " + k.Name
}
