package install

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
)

// Installed reads the settings of operator id installed in namespace
// back from what install applied. It reads its Deployment (image,
// replicas, resources, scheduling, pull secrets and the arguments
// install wrote), its registration (default, watched namespaces) and
// whether the admission policies exist and its platform opts out of the Kamelet catalog. An
// upgrade applies them again with another image, so that it changes
// nothing else.
func (i *Installer) Installed(ctx context.Context, id, namespace string) (Config, error) {
	d := &appsv1.Deployment{}
	if err := i.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: operatorName(id)}, d); err != nil {
		if apierrors.IsNotFound(err) {
			return Config{}, fmt.Errorf("operator %s is not installed in namespace %s (no Deployment %s): install it with caravan install", id, namespace, operatorName(id))
		}
		return Config{}, fmt.Errorf("reading the operator's Deployment: %w", err)
	}
	c, err := configFromDeployment(d)
	if err != nil {
		return Config{}, err
	}
	c.ID, c.Namespace = id, namespace
	iop := &camelv1alpha1.IntegrationOperator{}
	if err := i.Client.Get(ctx, client.ObjectKey{Name: id}, iop); err != nil {
		return Config{}, fmt.Errorf("reading the registration of operator %s: %w", id, err)
	}
	c.Default = iop.Spec.Default
	c.WatchNamespaces = append([]string(nil), iop.Spec.WatchNamespaces...)
	// Installed with admission: a limited operator has its grants of the
	// namespaces policy (or, installed by an earlier version, its binding
	// of the legacy one), and the shared policies exist for any.
	markers := []client.Object{&admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: AssignmentPolicy}}}
	if len(c.WatchNamespaces) > 0 {
		markers = []client.Object{
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: LimitedRoleName(id, namespace)}},
			legacyNamespacesBinding(id),
		}
	}
	for _, marker := range markers {
		if err = i.Client.Get(ctx, client.ObjectKeyFromObject(marker), marker); !apierrors.IsNotFound(err) {
			break
		}
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return Config{}, fmt.Errorf("reading the admission policies of operator %s: %w", id, err)
	}
	c.SkipAdmission = apierrors.IsNotFound(err)
	itp := &camelv1.IntegrationPlatform{}
	err = i.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: id}, itp)
	if err != nil && !apierrors.IsNotFound(err) {
		return Config{}, fmt.Errorf("reading the platform of operator %s: %w", id, err)
	}
	c.SkipKamelets = err == nil && !itp.Spec.Kamelet.CatalogEnabled()
	return c, nil
}

// configFromDeployment reads back the settings that deployment(c) wrote
// into d.
func configFromDeployment(d *appsv1.Deployment) (Config, error) {
	pod := d.Spec.Template.Spec
	if len(pod.Containers) == 0 {
		return Config{}, fmt.Errorf("the Deployment %s/%s has no container", d.Namespace, d.Name)
	}
	ctr := pod.Containers[0]
	c := Config{Image: ctr.Image, Replicas: ptr.To(ptr.Deref(d.Spec.Replicas, 1)), Resources: ctr.Resources,
		NodeSelector: pod.NodeSelector, Tolerations: pod.Tolerations}
	for _, s := range pod.ImagePullSecrets {
		c.ImagePullSecrets = append(c.ImagePullSecrets, s.Name)
	}
	for _, arg := range ctr.Args {
		name, value, _ := strings.Cut(arg, "=")
		switch name {
		case "--heartbeat-interval":
			hb, err := time.ParseDuration(value)
			if err != nil {
				return Config{}, fmt.Errorf("the Deployment's %s: %w", arg, err)
			}
			c.HeartbeatInterval = hb
		case "--verbosity":
			v, err := strconv.Atoi(value)
			if err != nil {
				return Config{}, fmt.Errorf("the Deployment's %s: %w", arg, err)
			}
			c.Verbosity = v
		case "--pprof", "--pprof-bind-address":
			c.Pprof = true
		case "--log-format":
			c.LogJSON = value == "json"
		}
	}
	return c, nil
}
