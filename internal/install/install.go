package install

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/config/crd"
	"github.com/caravan-dev/caravan/internal/apply"
	"github.com/caravan-dev/caravan/internal/await"
)

// Installer applies and removes operator installations.
type Installer struct {
	// Client also watches: the installer watches what it waits for.
	Client client.WithWatch
	// Out receives one line per object.
	Out io.Writer
	// fleet is set when the fleet controller installs, which may change
	// what IntegrationOperators declare.
	fleet bool
}

// FleetInstaller is the Installer of the fleet controller, which alone may
// install and remove the operators that IntegrationOperators declare.
func FleetInstaller(c client.WithWatch, out io.Writer) *Installer {
	return &Installer{Client: c, Out: out, fleet: true}
}

// Check refuses an installation that would take an id over: an id
// registered in another namespace is refused always, one installed in the
// same namespace unless force (a reinstall or upgrade). It also refuses a
// second default operator, and watched namespaces that do not exist.
func (i *Installer) Check(ctx context.Context, c Config, force bool) error {
	iop, err := i.readRegistration(ctx, c.ID)
	if err != nil {
		return err
	}
	if err := declaredError(iop); err != nil {
		return err
	}
	if err := i.refuseForeign(ctx, c.ID); err != nil {
		return err
	}
	if ns := registeredNamespaceOf(iop); ns != "" {
		if ns != c.Namespace {
			return fmt.Errorf("operator id %q is registered to namespace %q: uninstall it there first (caravan uninstall -x %s -n %s) or choose another id; --force never moves an id between namespaces",
				c.ID, ns, c.ID, ns)
		}
		if !force {
			return fmt.Errorf("operator id %q is already installed in namespace %s; use --force to reinstall or upgrade it", c.ID, ns)
		}
	}
	for _, ns := range c.WatchNamespaces {
		err := i.Client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("namespace %s, which --watch-namespaces names, does not exist: create it first (the operator gets its rights there)", ns)
		}
		if err != nil {
			return fmt.Errorf("reading namespace %s: %w", ns, err)
		}
	}
	if !c.Default {
		return nil
	}
	other, err := i.OtherDefault(ctx, c.ID)
	if err != nil {
		return err
	}
	if other != "" {
		return fmt.Errorf("operator %q is already the default operator; there can be only one: install %q without --default, or uninstall %q first",
			other, c.ID, other)
	}
	return nil
}

// refuseDeclared refuses to install or uninstall an id that an
// IntegrationOperator declares (see declaredError).
func (i *Installer) refuseDeclared(ctx context.Context, id string) error {
	iop, err := i.readRegistration(ctx, id)
	if err != nil {
		return err
	}
	return declaredError(iop)
}

// declaredError refuses the registration iop (nil when there is none) when
// it declares its operator: the fleet controller runs it, and two
// installers would fight over its objects.
func declaredError(iop *camelv1alpha1.IntegrationOperator) error {
	if iop == nil || !iop.Declared() {
		return nil
	}
	return fmt.Errorf("operator id %q is declared (its IntegrationOperator's spec.namespace is %s): the fleet controller runs it; change its IntegrationOperator instead (kubectl edit integrationoperator %s)",
		iop.Name, iop.Spec.Namespace, iop.Name)
}

// applyCRD applies d, one of Caravan's CRDs. Over a CRD of the same name that another installer
// wrote (Camel K's), it says so: server-side apply keeps what that installer set and Caravan's
// schema does not (a version, say), and Caravan's schema accepts every field that Camel K 2.x's
// operator writes, so that operator keeps working beside Caravan's.
func (i *Installer) applyCRD(ctx context.Context, d *apiextensionsv1.CustomResourceDefinition) (bool, error) {
	before, err := i.applyRead(ctx, d)
	if err != nil {
		return false, err
	}
	if before == nil {
		return true, nil
	}
	existing := before.(*apiextensionsv1.CustomResourceDefinition)
	if existing.Labels[crd.PartOfLabel] == crd.PartOf {
		return false, nil
	}
	fmt.Fprintf(i.Out, "CustomResourceDefinition %s was %s: Caravan's schema now serves it%s; it accepts every field Camel K 2.x's operator writes, which keeps working\n",
		d.Name, foreignInstaller(existing), keptVersions(existing, d))
	return false, nil
}

// foreignInstaller says whose CRD d is: Camel K's (labelled app=camel-k), or its writers'.
func foreignInstaller(d *apiextensionsv1.CustomResourceDefinition) string {
	var managers []string
	for _, m := range d.ManagedFields {
		if m.Subresource == "" && m.Manager != FieldManager && !slices.Contains(managers, m.Manager) {
			managers = append(managers, m.Manager)
		}
	}
	who := "written by " + strings.Join(managers, ", ")
	if d.Labels["app"] == "camel-k" {
		return "Camel K's (" + who + ")"
	}
	return who
}

// keptVersions names the versions that existing serves and ours does not, which the apply kept.
func keptVersions(existing, ours *apiextensionsv1.CustomResourceDefinition) string {
	var kept []string
	for _, v := range existing.Spec.Versions {
		if !slices.ContainsFunc(ours.Spec.Versions, func(o apiextensionsv1.CustomResourceDefinitionVersion) bool { return o.Name == v.Name }) {
			kept = append(kept, v.Name)
		}
	}
	if len(kept) == 0 {
		return ""
	}
	return " (its versions " + strings.Join(kept, ", ") + " are kept as they were)"
}

// readRegistration reads operator id's IntegrationOperator; nil when the id
// is not registered.
func (i *Installer) readRegistration(ctx context.Context, id string) (*camelv1alpha1.IntegrationOperator, error) {
	iop := &camelv1alpha1.IntegrationOperator{}
	err := i.Client.Get(ctx, client.ObjectKey{Name: id}, iop)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checking whether operator id %q is registered: %w", id, err)
	}
	return iop, nil
}

// RegisteredNamespace returns the namespace operator id is registered to,
// or was installed into before its first registration; "" when the id is
// not registered.
func (i *Installer) RegisteredNamespace(ctx context.Context, id string) (string, error) {
	iop, err := i.readRegistration(ctx, id)
	return registeredNamespaceOf(iop), err
}

// HasOperator tells whether operator id has a Deployment in namespace.
func (i *Installer) HasOperator(ctx context.Context, id, namespace string) (bool, error) {
	err := i.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: operatorName(id)}, &appsv1.Deployment{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// registeredNamespaceOf is registeredNamespace of the registration iop,
// nil when there is none.
func registeredNamespaceOf(iop *camelv1alpha1.IntegrationOperator) string {
	switch {
	case iop == nil:
		return ""
	case iop.Status.Namespace != "":
		return iop.Status.Namespace
	}
	return iop.Annotations[InstalledNamespaceAnnotation]
}

// OtherDefault returns the id of the default operator, if it is not id.
func (i *Installer) OtherDefault(ctx context.Context, id string) (string, error) {
	list := &camelv1alpha1.IntegrationOperatorList{}
	if err := i.Client.List(ctx, list); err != nil {
		return "", fmt.Errorf("checking for another default operator: %w", err)
	}
	for _, other := range list.Items {
		if other.Name != id && other.Spec.Default {
			return other.Name, nil
		}
	}
	return "", nil
}

// Namespace is the operator namespace as an install creates it: it
// enforces PodSecurity restricted, which the operator's pod meets.
func Namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{TypeMeta: typeMeta("v1", "Namespace"), ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}
}

// Install applies objs in order with server-side apply, with two
// exceptions. It creates the IntegrationOperator to claim the id
// (refused when the id is registered to another namespace). It creates
// the IntegrationPlatform and the Maven cache's claim only when
// absent, so that a re-install keeps what a user set on them. When a
// step fails, it deletes every object it created (not those it only
// updated, never a CRD) and returns the error.
func (i *Installer) Install(ctx context.Context, namespace string, objs []client.Object) error {
	var created []client.Object
	fail := func(err error) error {
		return errors.Join(err, i.rollback(ctx, created))
	}
	ns, err := i.ensureNamespace(ctx, namespace)
	if err != nil {
		return err
	}
	if ns != nil {
		created = append(created, ns)
	}
	crdsReady := false
	for _, obj := range objs {
		if _, isCRD := obj.(*apiextensionsv1.CustomResourceDefinition); !isCRD && !crdsReady {
			if err := waitCRDs(ctx, i.Client, objs); err != nil {
				return fail(err)
			}
			crdsReady = true
		}
		var isNew bool
		var err error
		switch o := obj.(type) {
		case *camelv1alpha1.IntegrationOperator:
			isNew, err = i.claim(ctx, namespace, o)
		case *camelv1.IntegrationPlatform, *corev1.PersistentVolumeClaim:
			isNew, err = i.createIfAbsent(ctx, o)
		case *apiextensionsv1.CustomResourceDefinition:
			isNew, err = i.applyCRD(ctx, o)
		default:
			isNew, err = i.applyOne(ctx, obj)
		}
		if err != nil {
			return fail(err)
		}
		if isNew {
			created = append(created, obj)
		}
	}
	for _, obj := range objs {
		if iop, ok := obj.(*camelv1alpha1.IntegrationOperator); ok {
			if err := i.prune(ctx, iop.Name, namespace, objs); err != nil {
				return fail(err)
			}
		}
	}
	return nil
}

// ensureNamespace creates namespace as Namespace makes it when it does not
// exist, and returns it then; an existing namespace keeps its labels, and
// nil is returned.
func (i *Installer) ensureNamespace(ctx context.Context, namespace string) (*corev1.Namespace, error) {
	err := i.Client.Get(ctx, client.ObjectKey{Name: namespace}, &corev1.Namespace{})
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading namespace %s: %w", namespace, err)
	}
	if err == nil {
		return nil, nil
	}
	ns := Namespace(namespace)
	if err := i.Client.Create(ctx, ns); apierrors.IsAlreadyExists(err) {
		return nil, nil // created meanwhile, by another installer
	} else if err != nil {
		return nil, fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	fmt.Fprintf(i.Out, "namespace/%s created\n", namespace)
	return ns, nil
}

// claim makes this installation the holder of the id: it creates the
// registration iop when absent, which only one of concurrent installs
// can do, before anything cluster-scoped of the operator exists. An id
// registered, or being installed, in another namespace is refused; the
// registration of this namespace is applied as any object.
func (i *Installer) claim(ctx context.Context, namespace string, iop *camelv1alpha1.IntegrationOperator) (bool, error) {
	err := i.Client.Create(ctx, iop.DeepCopy(), client.FieldOwner(FieldManager))
	if err == nil {
		fmt.Fprintf(i.Out, "%s created\n", describe(iop))
		return true, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return false, fmt.Errorf("registering operator id %q: %w", iop.Name, err)
	}
	holder, err := i.RegisteredNamespace(ctx, iop.Name)
	if err != nil {
		return false, err
	}
	if holder != "" && holder != namespace {
		return false, fmt.Errorf("operator id %q is registered to namespace %q: uninstall it there first (caravan uninstall -x %s -n %s) or choose another id",
			iop.Name, holder, iop.Name, holder)
	}
	return i.applyOne(ctx, iop)
}

// createIfAbsent creates obj when it does not exist and otherwise leaves
// it as it is: what a user set on it survives a re-install.
func (i *Installer) createIfAbsent(ctx context.Context, obj client.Object) (bool, error) {
	err := i.Client.Create(ctx, obj.DeepCopyObject().(client.Object), client.FieldOwner(FieldManager))
	switch {
	case err == nil:
		fmt.Fprintf(i.Out, "%s created\n", describe(obj))
		return true, nil
	case apierrors.IsAlreadyExists(err):
		fmt.Fprintf(i.Out, "%s kept as it is\n", describe(obj))
		return false, nil
	default:
		return false, fmt.Errorf("creating %s: %w", describe(obj), err)
	}
}

func (i *Installer) applyOne(ctx context.Context, obj client.Object) (bool, error) {
	before, err := i.applyRead(ctx, obj)
	return before == nil && err == nil, err
}

// applyRead applies obj and returns it as it was before, nil when it is new.
func (i *Installer) applyRead(ctx context.Context, obj client.Object) (client.Object, error) {
	before := obj.DeepCopyObject().(client.Object)
	err := i.Client.Get(ctx, client.ObjectKeyFromObject(obj), before)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading %s: %w", describe(obj), err)
	}
	isNew := apierrors.IsNotFound(err)
	cfg, err := apply.Configuration(obj)
	if err != nil {
		return nil, err
	}
	if err := i.Client.Apply(ctx, cfg, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return nil, fmt.Errorf("applying %s: %w", describe(obj), err)
	}
	if isNew {
		fmt.Fprintf(i.Out, "%s created\n", describe(obj))
		return nil, nil
	}
	fmt.Fprintf(i.Out, "%s configured\n", describe(obj))
	return before, nil
}

// waitCRDs waits until each CustomResourceDefinition among objs is Established.
func waitCRDs(ctx context.Context, c client.WithWatch, objs []client.Object) error {
	for _, obj := range objs {
		if d, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok {
			if err := waitEstablished(ctx, c, d.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

func (i *Installer) rollback(ctx context.Context, created []client.Object) error {
	var errs []error
	for k := len(created) - 1; k >= 0; k-- {
		obj := created[k]
		if _, isCRD := obj.(*apiextensionsv1.CustomResourceDefinition); isCRD {
			// Shared by every operator, maybe one installed at the same
			// time: removing a CRD removes all its resources.
			continue
		}
		if err := i.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("removing %s after the failed install: %w", describe(obj), err))
			continue
		}
		fmt.Fprintf(i.Out, "%s removed (the install failed)\n", describe(obj))
	}
	return errors.Join(errs...)
}

// Uninstall removes an operator's objects: its Deployment, RBAC,
// registration and platform. Integrations it owned stay (they show as
// orphans). With all, the CustomResourceDefinitions and the shared reader
// role go too, and with them every Caravan resource of the cluster.
func (i *Installer) Uninstall(ctx context.Context, id, namespace string, all bool) error {
	if !i.fleet {
		if err := i.refuseDeclared(ctx, id); err != nil {
			return err
		}
	}
	if all {
		if err := i.refuseAllBesideForeign(ctx); err != nil {
			return err
		}
	}
	name := operatorName(id)
	// The operator goes first, and is waited for: a running operator would
	// register again.
	if err := i.stopOperator(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}); err != nil {
		return err
	}
	// By name, and by the inventory's labels: an install by an earlier
	// version labelled its ServiceAccount and Service with the id only.
	objs := []client.Object{
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: MetricsServiceName(id), Namespace: namespace}},
		&camelv1.IntegrationPlatform{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: namespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}},
	}
	if !i.fleet {
		// Only caravan install --maven-cache makes the claim; a declared operator has none.
		objs = append(objs, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: MavenCacheClaim(id), Namespace: namespace}})
	}
	owned, err := i.inventory(ctx, id, namespace)
	if err != nil {
		return err
	}
	objs = append(objs, owned...)
	// The registration, the user role and the admission binding belong to
	// the id: they stay when the id is registered to another namespace,
	// whose operator still uses them.
	registered, err := i.RegisteredNamespace(ctx, id)
	if err != nil {
		return err
	}
	if registered == "" || registered == namespace {
		if !i.fleet { // the fleet removes a declared operator as its registration is deleted
			objs = append(objs, &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: id}})
		}
		objs = append(objs, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: UserRole(id)}}, legacyNamespacesBinding(id))
		// The grants of caravan grant bind that role: they go with it.
		grants := &rbacv1.RoleBindingList{}
		if err := i.Client.List(ctx, grants, client.MatchingLabels{GrantLabel: id}); err != nil {
			return fmt.Errorf("listing the grants of operator %s: %w", id, err)
		}
		for j := range grants.Items {
			objs = append(objs, &grants.Items[j])
		}
	} else {
		fmt.Fprintf(i.Out, "IntegrationOperator %s kept: it is registered to namespace %s\n", id, registered)
	}
	if all {
		objs = append(append(append(objs, sharedAdmissionManifests()...), defaultUsePolicy()...), labelGuardPolicy()...)
		objs = append(objs, &admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: legacyNamespacesPolicy}})
		objs = append(objs,
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ReaderRole}})
		for _, name := range SharedRoles {
			objs = append(objs, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}})
		}
		crds, err := crdManifests()
		if err != nil {
			return err
		}
		objs = append(objs, crds...)
	}
	if err := i.deleteAll(ctx, objs); err != nil {
		return err
	}
	return i.pruneLegacyNamespaces(ctx)
}

// deleteAll deletes objs, one line each for those it deleted; those that
// do not exist are no error, and one that fails does not stop the others.
func (i *Installer) deleteAll(ctx context.Context, objs []client.Object) error {
	var errs []error
	for _, obj := range objs {
		deleted, err := i.deleteIfExists(ctx, obj)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("deleting %s: %w", describe(obj), err))
		case deleted:
			fmt.Fprintf(i.Out, "%s deleted\n", describe(obj))
		}
	}
	return errors.Join(errs...)
}

// deleteIfExists deletes obj, with its kind set for describe, and tells
// whether it existed.
func (i *Installer) deleteIfExists(ctx context.Context, obj client.Object) (bool, error) {
	gvk, err := i.Client.GroupVersionKindFor(obj)
	if err != nil {
		return false, err
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	err = i.Client.Delete(ctx, obj)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		// A kind the cluster does not serve holds nothing.
		return false, nil
	}
	return err == nil, err
}

// FitAdmission sets c.ValidatingOnly when c installs admission policies on a cluster that serves
// no MutatingAdmissionPolicy.
func (i *Installer) FitAdmission(c *Config) error {
	if c.SkipAdmission {
		return nil
	}
	served, err := i.MutatingPoliciesServed()
	if err != nil {
		return fmt.Errorf("asking the cluster whether it serves MutatingAdmissionPolicy: %w", err)
	}
	c.ValidatingOnly = !served
	return nil
}

// MutatingPoliciesServed tells whether the cluster serves MutatingAdmissionPolicy v1 (Kubernetes
// 1.36 and later): where it does not, the admission policies are installed ValidatingOnly.
func (i *Installer) MutatingPoliciesServed() (bool, error) {
	_, err := i.Client.RESTMapper().RESTMapping(schema.GroupKind{Group: admissionv1.GroupName, Kind: "MutatingAdmissionPolicy"}, "v1")
	if meta.IsNoMatchError(err) {
		return false, nil
	}
	return err == nil, err
}

// stopOperator deletes the operator's Deployment with its pods (foreground
// deletion) and waits until they are gone, watching the Deployment.
func (i *Installer) stopOperator(ctx context.Context, d *appsv1.Deployment) error {
	err := i.Client.Delete(ctx, d, client.PropagationPolicy(metav1.DeletePropagationForeground))
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting Deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	_, gone, err := await.Object(ctx, i.Client, client.ObjectKeyFromObject(d), &appsv1.Deployment{},
		func(_ *appsv1.Deployment, err error) (bool, string, error) { return apierrors.IsNotFound(err), "", nil })
	switch {
	case err != nil:
		return fmt.Errorf("waiting for Deployment %s/%s to go: %w", d.Namespace, d.Name, err)
	case !gone:
		return fmt.Errorf("the operator's Deployment %s/%s is still there after 2m: see its events and its pods' (kubectl describe deployment -n %s %s)",
			d.Namespace, d.Name, d.Namespace, d.Name)
	}
	fmt.Fprintf(i.Out, "Deployment %s/%s deleted, with its pods\n", d.Namespace, d.Name)
	return nil
}
