package install

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/config/rbac"
)

// FleetName names the fleet controller's ServiceAccount, Deployment and Lease.
const FleetName = "caravan-fleet"

// fleetRole names the ClusterRole and ClusterRoleBinding of the fleet
// controller of namespace: a fleet controller installed in another
// namespace never rebinds this one's rights.
func fleetRole(namespace string) string { return "caravan:fleet:" + namespace }

// FleetFinalizer holds a declared IntegrationOperator until the fleet
// controller has removed its operator's objects.
const FleetFinalizer = "caravan.dev/fleet"

// FleetDefaults are what a declared operator gets when its spec is silent:
// the fleet controller's own settings.
type FleetDefaults struct {
	// Image is the operator image; a declared spec.version replaces its tag.
	Image string
	// Registry is the build registry of the operator's platform, and
	// RegistryInsecure lets the operator reach it over plain HTTP.
	Registry         string
	RegistryInsecure bool
	// Version is the fleet controller's own.
	Version string
	// HeartbeatInterval is how often the operators renew their registration;
	// their own default (10s) when zero.
	HeartbeatInterval time.Duration
	// SkipKamelets has the operators install no Kamelets (Config.SkipKamelets).
	SkipKamelets bool
}

// DeclaredConfig is the installation that the IntegrationOperator iop
// declares: its spec over the fleet's defaults. It refuses an operator
// that is not declared, and an image or version that is no image reference.
func DeclaredConfig(iop *camelv1alpha1.IntegrationOperator, d FleetDefaults) (Config, error) {
	if !iop.Declared() {
		return Config{}, fmt.Errorf("operator %s is not declared: its spec names no namespace", iop.Name)
	}
	if err := ValidateWatchNamespaces(iop.Spec.WatchNamespaces); err != nil {
		return Config{}, fmt.Errorf("spec.watchNamespaces: %w", err)
	}
	s := iop.Spec
	c := Config{
		ID: iop.Name, Namespace: s.Namespace, Default: s.Default, WatchNamespaces: s.WatchNamespaces,
		Image: d.Image, Registry: d.Registry, RegistryInsecure: d.RegistryInsecure, Version: s.Version,
		SkipAdmission: s.Admission != nil && !*s.Admission, Replicas: s.Replicas,
		NodeSelector: s.NodeSelector, Tolerations: s.Tolerations, HeartbeatInterval: d.HeartbeatInterval,
		SkipKamelets: d.SkipKamelets,
	}
	if s.Resources != nil {
		c.Resources = *s.Resources
	}
	switch {
	case s.Image != "":
		if _, err := name.ParseReference(s.Image); err != nil {
			return Config{}, fmt.Errorf("spec.image %q is no image reference: %w", s.Image, err)
		}
		c.Image = s.Image
	case s.Version != "":
		base, err := name.ParseReference(d.Image)
		if err != nil {
			return Config{}, fmt.Errorf("the fleet's operator image %q is no image reference: %w", d.Image, err)
		}
		tagged, err := name.NewTag(base.Context().Name()+":"+s.Version, name.WeakValidation)
		if err != nil {
			return Config{}, fmt.Errorf("spec.version %q cannot be an image tag: %w", s.Version, err)
		}
		c.Image = tagged.String()
	}
	return c, nil
}

// Converge makes the cluster hold the installation c as declared, with no
// rollback: what fails is retried by the next reconcile. It applies what
// caravan install applies, except the CRDs (the fleet's install applied
// them) and the registration (the declaration itself), and prunes what the
// installation no longer holds. The platform is created when absent and
// otherwise left as its users set it.
func (i *Installer) Converge(ctx context.Context, c Config) error {
	if err := i.FitAdmission(&c); err != nil {
		return err
	}
	objs, err := Manifests(c)
	if err != nil {
		return err
	}
	objs = slices.DeleteFunc(objs, func(o client.Object) bool {
		switch o.(type) {
		case *apiextensionsv1.CustomResourceDefinition, *camelv1alpha1.IntegrationOperator:
			return true
		}
		return false
	})
	if _, err := i.ensureNamespace(ctx, c.Namespace); err != nil {
		return err
	}
	for _, obj := range objs {
		if _, ok := obj.(*camelv1.IntegrationPlatform); ok {
			_, err = i.createIfAbsent(ctx, obj)
		} else {
			_, err = i.applyOne(ctx, obj)
		}
		if err != nil {
			return err
		}
	}
	return i.prune(ctx, c.ID, c.Namespace, objs)
}

// OperatorDeployment is the key of the Deployment of operator id in namespace.
func OperatorDeployment(id, namespace string) client.ObjectKey {
	return client.ObjectKey{Namespace: namespace, Name: operatorName(id)}
}

// Rollout is the roll-out of Deployment d as kstatus computes it: Current
// once every replica runs the latest template and is available.
func Rollout(d *appsv1.Deployment) (*status.Result, error) {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: raw}
	u.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	res, err := status.Compute(u)
	if err != nil {
		return nil, fmt.Errorf("computing the status of Deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	return res, nil
}

// FleetConfig says how to install the fleet controller.
type FleetConfig struct {
	Namespace string
	// Image runs the fleet controller; it is also the operators' default image.
	Image            string
	Registry         string
	RegistryInsecure bool
	// HeartbeatInterval is how often the operators it runs renew their
	// registration; their own default when zero.
	HeartbeatInterval time.Duration
	// SkipKamelets has the operators it runs install no Kamelets (Config.SkipKamelets).
	SkipKamelets bool
}

// CheckFleet refuses to install a fleet controller where one is installed
// already, or next to one in another namespace. In the first case, use
// --force to reinstall or upgrade it; two in different namespaces would
// both run every declared operator.
func (i *Installer) CheckFleet(ctx context.Context, namespace string) error {
	list := &appsv1.DeploymentList{}
	if err := i.Client.List(ctx, list, client.MatchingLabels(fleetLabels())); err != nil {
		return fmt.Errorf("looking for a fleet controller: %w", err)
	}
	if slices.ContainsFunc(list.Items, func(d appsv1.Deployment) bool { return d.Namespace == namespace }) {
		return fmt.Errorf("the fleet controller is already installed in namespace %s; use --force to reinstall or upgrade it", namespace)
	}
	if len(list.Items) > 0 {
		other := list.Items[0].Namespace
		return fmt.Errorf("a fleet controller runs in namespace %s: there is one per cluster; uninstall it there first (caravan uninstall --fleet -n %s)",
			other, other)
	}
	return nil
}

// UninstallFleet removes the fleet controller of namespace: its Deployment
// (waited for), identity and rights. It refuses while IntegrationOperators
// declare operators, which it would leave unmanaged, with their deletion
// held by its finalizer.
func (i *Installer) UninstallFleet(ctx context.Context, namespace string) error {
	list := &camelv1alpha1.IntegrationOperatorList{}
	if err := i.Client.List(ctx, list); err != nil {
		return fmt.Errorf("looking for declared operators: %w", err)
	}
	var declared []string
	for _, iop := range list.Items {
		if iop.Declared() || slices.Contains(iop.Finalizers, FleetFinalizer) {
			declared = append(declared, iop.Name)
		}
	}
	if len(declared) > 0 {
		return fmt.Errorf("the fleet controller runs the declared operators %s: delete their IntegrationOperators first (kubectl delete integrationoperator %s)",
			strings.Join(declared, ", "), strings.Join(declared, " "))
	}
	if err := i.stopOperator(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: FleetName, Namespace: namespace}}); err != nil {
		return err
	}
	return i.deleteAll(ctx, []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: FleetName, Namespace: namespace}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: fleetRole(namespace)}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: fleetRole(namespace)}},
	})
}

// fleetLabels mark the fleet controller's objects.
func fleetLabels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": FleetName}
}

// FleetManifests are the fleet controller's installation: its CRDs, its
// identity and rights, and its Deployment. Its rights are those of an
// operator of every namespace, which it grants to the operators it runs
// (RBAC lets nobody grant what they do not hold), the verbs of the
// namespaces policy's grants (NamespacesGrants), and the writes of what
// caravan install creates.
func FleetManifests(c FleetConfig) ([]client.Object, error) {
	objs, err := crdManifests()
	if err != nil {
		return nil, err
	}
	rules, err := rbac.OperatorRules()
	if err != nil {
		return nil, err
	}
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	rules = append(rules,
		rbacv1.PolicyRule{APIGroups: []string{camelv1.GroupVersion.Group}, Resources: []string{"integrationoperators"},
			Verbs: []string{"get", "list", "watch", "update", "patch", "use", "limit", "serve"}},
		rbacv1.PolicyRule{APIGroups: []string{camelv1.GroupVersion.Group},
			Resources: []string{"integrationoperators/status", "integrationoperators/finalizers"}, Verbs: []string{"get", "update", "patch"}},
		rbacv1.PolicyRule{APIGroups: []string{camelv1.GroupVersion.Group}, Resources: []string{"integrationplatforms", "kamelets"}, Verbs: all},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch", "create"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"serviceaccounts", "services"}, Verbs: all},
		rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: all},
		rbacv1.PolicyRule{APIGroups: []string{rbacv1.GroupName},
			Resources: []string{"roles", "rolebindings", "clusterroles", "clusterrolebindings"}, Verbs: all},
		rbacv1.PolicyRule{APIGroups: []string{"admissionregistration.k8s.io"},
			Resources: []string{"validatingadmissionpolicies", "validatingadmissionpolicybindings",
				"mutatingadmissionpolicies", "mutatingadmissionpolicybindings"}, Verbs: all},
		rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: all},
	)
	// It makes the teams' roles with the operators, and RBAC lets it grant only what it holds.
	for _, o := range sharedRoles() {
		rules = append(rules, o.(*rbacv1.ClusterRole).Rules...)
	}
	sa := &corev1.ServiceAccount{TypeMeta: typeMeta("v1", "ServiceAccount"),
		ObjectMeta: metav1.ObjectMeta{Name: FleetName, Namespace: c.Namespace, Labels: fleetLabels()}}
	role := &rbacv1.ClusterRole{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"),
		ObjectMeta: metav1.ObjectMeta{Name: fleetRole(c.Namespace), Labels: fleetLabels()}, Rules: rules}
	binding := &rbacv1.ClusterRoleBinding{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
		ObjectMeta: metav1.ObjectMeta{Name: fleetRole(c.Namespace), Labels: fleetLabels()},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: FleetName, Namespace: c.Namespace}}}
	return append(objs, sa, role, binding, fleetDeployment(c)), nil
}

// fleetDeployment runs `caravan-operator fleet` in the pod an operator
// gets, under the fleet's own name and identity.
func fleetDeployment(c FleetConfig) *appsv1.Deployment {
	d := deployment(Config{ID: "fleet", Namespace: c.Namespace, Image: c.Image})
	d.Name, d.Labels = FleetName, fleetLabels()
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: fleetLabels()}
	d.Spec.Replicas = ptr.To[int32](1)
	pod := &d.Spec.Template
	pod.Labels = fleetLabels()
	pod.Annotations = map[string]string{"kubectl.kubernetes.io/default-container": "fleet"}
	pod.Spec.ServiceAccountName = FleetName
	container := &pod.Spec.Containers[0]
	container.Name = "fleet"
	container.Args = []string{"fleet",
		fmt.Sprintf("--metrics-bind-address=$(POD_IP):%d", MetricsPort),
		fmt.Sprintf("--health-probe-bind-address=$(POD_IP):%d", ProbesPort),
		"--operator-image=" + c.Image, "--registry=" + c.Registry, fmt.Sprintf("--registry-insecure=%t", c.RegistryInsecure)}
	if c.HeartbeatInterval > 0 {
		container.Args = append(container.Args, "--heartbeat-interval="+c.HeartbeatInterval.String())
	}
	if c.SkipKamelets {
		container.Args = append(container.Args, "--skip-kamelets")
	}
	container.Env = slices.DeleteFunc(container.Env, func(e corev1.EnvVar) bool {
		return e.Name == "OPERATOR_ID" || e.Name == "KAMEL_OPERATOR_ID"
	})
	return d
}
