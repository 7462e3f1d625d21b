package install

import (
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/config/crd"
)

// InstalledNamespaceAnnotation records, on an IntegrationOperator, the
// namespace its operator was installed into, before the operator first
// registers there.
const InstalledNamespaceAnnotation = "caravan.dev/installed-namespace"

// ReaderRole lets every authenticated user read platforms and operator
// registrations (aggregated into view, edit and admin too).
const ReaderRole = "caravan-operator-reader"

// ViewRole and EditRole let a team read, and write, the camel.apache.org kinds a team works
// with; Kubernetes aggregates them into view, and into edit and admin. Assigning a resource to
// an operator also needs its <id>-operator-user role in the namespace (UserRole).
const (
	ViewRole = "caravan-view"
	EditRole = "caravan-edit"
)

// MetricsReaderRole lets a caller read the operators' metrics and profiles: bind it to the
// scraper's identity (the monitoring objects bind their own).
const MetricsReaderRole = "caravan-metrics-reader"

// GrantLabel marks, with an operator id, the RoleBindings of caravan grant that let a
// subject use that operator in one namespace; uninstalling the id deletes them.
const GrantLabel = "caravan.dev/grants-use-of"

// SharedRoles are the ClusterRoles every installation of a cluster shares (the reader role's
// binding has its name too).
var SharedRoles = []string{ReaderRole, ViewRole, EditRole, MetricsReaderRole}

// ValidateWatchNamespaces refuses a watched namespace that no namespace can be named, as the
// IntegrationOperator CRD does.
func ValidateWatchNamespaces(namespaces []string) error {
	for _, ns := range namespaces {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("watched namespace %q: %s", ns, strings.Join(errs, "; "))
		}
	}
	return nil
}

// Config says what to install.
type Config struct {
	ID        string
	Namespace string
	Default   bool
	// WatchNamespaces limits the operator; empty means all namespaces.
	WatchNamespaces []string
	Image           string
	Registry        string
	// RegistryInsecure lets the operator reach the registry over plain HTTP.
	RegistryInsecure bool
	// RegistrySecret names the Secret of the registry's credentials, in Namespace.
	RegistrySecret string
	// BuildStrategy, when set, is a new platform's build strategy (pod or dependency-list).
	BuildStrategy string
	// MavenCache, when set, is the size of the claim that keeps Maven's
	// local repository across builds (MavenCacheClaim); a new platform names it.
	MavenCache *resource.Quantity
	Version    string
	// SkipAdmission leaves out the admission policies that enforce who
	// may assign resources to which operator (for clusters that cannot
	// run them; the operators still mirror labels themselves).
	SkipAdmission bool
	// ValidatingOnly installs the validating admission policies alone, for a cluster that serves
	// no MutatingAdmissionPolicy (Kubernetes 1.30 to 1.35). DefaultUsePolicy then judges
	// unassigned resources in DefaultPolicy's stead, and the operators mirror labels themselves.
	ValidatingOnly bool
	// SkipKamelets has a new platform opt out of the Kamelet catalog of its Camel version, which
	// the operator installs (spec.kamelet.catalog: false). The installer itself carries no Kamelet.
	SkipKamelets bool
	// Replicas of the operator Deployment (one leads); 1 when nil.
	Replicas *int32
	// Resources of the operator container; DefaultResources when empty.
	Resources corev1.ResourceRequirements
	// NodeSelector, Tolerations and ImagePullSecrets go into the operator's pod.
	NodeSelector     map[string]string
	Tolerations      []corev1.Toleration
	ImagePullSecrets []string
	// HeartbeatInterval is how often the operator renews its registration;
	// the operator's default (10s) when zero.
	HeartbeatInterval time.Duration
	// Verbosity is the operator's log verbosity (0 logs the least).
	Verbosity int
	// LogJSON makes the operator log one JSON object a line.
	LogJSON bool
	// Pprof serves the Go runtime's /debug/pprof on PprofPort of the pod,
	// for profiling.
	Pprof bool
}

// OperatorUID is the non-root user the operator image runs as.
const OperatorUID = 65532

// operatorName names the ServiceAccount and Deployment of operator id, and
// starts the names of its other objects. Every name an operator installs is
// derived from its id so that several operators can share a namespace.
func operatorName(id string) string { return id + "-operator" }

// UserRole is the ClusterRole that grants the verb use on the operator:
// bound to a user, it lets them assign resources to this operator.
func UserRole(id string) string { return id + "-operator-user" }

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

// Labels are the labels of what an installation of operator id makes, its
// pods among them: what selects them.
func Labels(id string) map[string]string {
	return map[string]string{"app.kubernetes.io/name": "caravan-operator", "app.kubernetes.io/instance": id}
}

// installationLabels mark what the installation of c.ID in c.Namespace
// owns alone (its ServiceAccount, Deployment, metrics Service and RBAC).
// They are the inventory that uninstall, re-installs and upgrades find
// it by.
func installationLabels(c Config) map[string]string {
	l := Labels(c.ID)
	l[OperatorNamespaceLabel] = c.Namespace
	return l
}

// Manifests returns every object of an installation, CRDs first, in the
// order they are applied.
func Manifests(c Config) ([]client.Object, error) {
	objs, err := crdManifests()
	if err != nil {
		return nil, err
	}
	rbacObjs, err := rbacManifests(c)
	if err != nil {
		return nil, err
	}
	// The registration comes first: creating it claims the id (see
	// Installer.Install).
	objs = append(objs, registration(c))
	objs = append(objs, rbacObjs...)
	if !c.SkipAdmission {
		objs = append(objs, admissionManifests(c)...)
	}
	if c.MavenCache != nil {
		objs = append(objs, mavenCache(c))
	}
	objs = append(objs, platform(c))
	objs = append(objs, deployment(c), metricsService(c))
	for _, o := range objs {
		labelObject(c, o)
	}
	return objs, nil
}

// ObjectLabel names which of an installation's objects one is, the same for every id and
// namespace: kustomize's components select by it, as a name that holds the id and namespace
// cannot be selected once a replacement changed it, and regular expressions in their selectors
// need kustomize 5.8, which no kubectl before 1.36 has.
const ObjectLabel = "caravan.dev/object"

// labelObject sets ObjectLabel on o when its name is derived from c's id: "id" for the id
// itself, "rbac" and what follows for caravan:operator:NAMESPACE:ID, what follows "ID-" else.
func labelObject(c Config, o client.Object) {
	labels := o.GetLabels()
	if labels["app.kubernetes.io/instance"] != c.ID && labels[camelv1.OperatorIDLabel] != c.ID {
		return
	}
	name, rbac := o.GetName(), ClusterRoleName(c.ID, c.Namespace)
	var slot string
	switch {
	case name == c.ID:
		slot = "id"
	case strings.HasPrefix(name, rbac):
		slot = "rbac" + strings.ReplaceAll(strings.TrimPrefix(name, rbac), ":", ".")
	case strings.HasPrefix(name, c.ID+"-"):
		slot = strings.TrimPrefix(name, c.ID+"-")
	default:
		return
	}
	l := maps.Clone(labels)
	l[ObjectLabel] = slot
	o.SetLabels(l)
}

func crdManifests() ([]client.Object, error) {
	crds, err := crd.CustomResourceDefinitions()
	if err != nil {
		return nil, err
	}
	objs := make([]client.Object, 0, len(crds))
	for _, d := range crds {
		d.TypeMeta = typeMeta("apiextensions.k8s.io/v1", "CustomResourceDefinition")
		objs = append(objs, d)
	}
	return objs, nil
}

func registration(c Config) *camelv1alpha1.IntegrationOperator {
	ns := append([]string(nil), c.WatchNamespaces...)
	sort.Strings(ns)
	l := Labels(c.ID)
	if c.Default {
		l[DefaultLabel] = "true"
	}
	return &camelv1alpha1.IntegrationOperator{
		TypeMeta: typeMeta(camelv1alpha1.GroupVersion.String(), "IntegrationOperator"),
		ObjectMeta: metav1.ObjectMeta{Name: c.ID, Labels: l,
			Annotations: map[string]string{InstalledNamespaceAnnotation: c.Namespace}},
		Spec: camelv1alpha1.IntegrationOperatorSpec{Default: c.Default, WatchNamespaces: ns, Version: c.Version},
	}
}

func platform(c Config) *camelv1.IntegrationPlatform {
	p := &camelv1.IntegrationPlatform{
		TypeMeta: typeMeta(camelv1.GroupVersion.String(), "IntegrationPlatform"),
		ObjectMeta: metav1.ObjectMeta{Name: c.ID, Namespace: c.Namespace,
			Annotations: map[string]string{camelv1.OperatorIDAnnotation: c.ID},
			Labels:      map[string]string{camelv1.OperatorIDLabel: c.ID}},
	}
	p.Spec.Build.Registry.Address = c.Registry
	p.Spec.Build.Registry.Insecure = c.RegistryInsecure
	p.Spec.Build.Registry.Secret = c.RegistrySecret
	if c.BuildStrategy != "" {
		p.Spec.Build.BuildConfiguration = &camelv1.RawObject{JSON: apiextensionsv1.JSON{
			Raw: fmt.Appendf(nil, `{"strategy":%q}`, c.BuildStrategy)}}
	}
	if c.MavenCache != nil {
		p.Spec.Build.Maven = &camelv1.RawObject{JSON: apiextensionsv1.JSON{
			Raw: fmt.Appendf(nil, `{"cacheVolumeClaim":%q}`, MavenCacheClaim(c.ID))}}
	}
	if c.SkipKamelets {
		p.Spec.Kamelet.Catalog = ptr.To(false)
	}
	return p
}

// MavenCacheClaim names the PersistentVolumeClaim of operator id's Maven cache.
func MavenCacheClaim(id string) string { return operatorName(id) + "-maven" }

// mavenCache is the claim of Maven's local repository, on the cluster's
// default StorageClass. Like the platform, it is created only when absent.
// keptAnnotation is procnode.KeptAnnotation: the local cluster's process node keeps a claim so
// annotated across clusters.
const keptAnnotation = "caravan.dev/kept-across-clusters"

func mavenCache(c Config) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		TypeMeta: typeMeta("v1", "PersistentVolumeClaim"),
		ObjectMeta: metav1.ObjectMeta{Name: MavenCacheClaim(c.ID), Namespace: c.Namespace,
			Labels: map[string]string{camelv1.OperatorIDLabel: c.ID},
			// The local cluster keeps this volume from one cluster to the next; others ignore it.
			Annotations: map[string]string{keptAnnotation: "true"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: *c.MavenCache}},
		},
	}
}

// OperatorContainer names the operator's container in its pod.
const OperatorContainer = "operator"

// Ports the operator container serves.
const (
	// MetricsPort serves the metrics over HTTPS, and /debug/pprof when Config.Pprof is set.
	MetricsPort = 8443
	ProbesPort  = 8081
)

// MetricsServiceName names the Service in front of operator id's metrics.
func MetricsServiceName(id string) string { return operatorName(id) + "-metrics" }

// DefaultResources are the operator container's requests and limits when
// none are given.
func DefaultResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("512Mi")},
	}
}

// operatorArgs are the container's arguments: the endpoints on the pod's
// address, and what the operator serves.
func operatorArgs(c Config) []string {
	args := []string{"operator",
		fmt.Sprintf("--metrics-bind-address=$(POD_IP):%d", MetricsPort),
		fmt.Sprintf("--health-probe-bind-address=$(POD_IP):%d", ProbesPort),
		"--leader-elect=true"}
	if c.Default {
		args = append(args, "--default")
	}
	if c.HeartbeatInterval > 0 {
		args = append(args, "--heartbeat-interval="+c.HeartbeatInterval.String())
	}
	if c.Verbosity > 0 {
		args = append(args, fmt.Sprintf("--verbosity=%d", c.Verbosity))
	}
	if c.LogJSON {
		args = append(args, "--log-format=json")
	}
	if c.Pprof {
		args = append(args, "--pprof")
	}
	if len(c.WatchNamespaces) > 0 {
		ns := append([]string(nil), c.WatchNamespaces...)
		sort.Strings(ns)
		args = append(args, "--watch-namespaces="+strings.Join(ns, ","))
	}
	return args
}

// MemoryLimitEnv gives the operator its container's memory limit, in
// bytes, from the downward API. The operator sets its Go runtime's soft
// memory limit (GOMEMLIMIT) to 90% of it, so that the garbage collector
// works harder before the container is killed for its memory.
const MemoryLimitEnv = "CARAVAN_MEMORY_LIMIT"

// ProcessorsEnv sets the Go runtime's number of processors (GOMAXPROCS) to
// the container's CPU limit, rounded up to whole cores by the downward API.
// Without it the runtime takes at least two however low the limit, which
// a node that enforces the limit throttles. Without a limit the downward
// API gives the node's processors, the runtime's own default.
const ProcessorsEnv = "GOMAXPROCS"

// operatorEnv names the operator (as Camel K's OPERATOR_ID and
// KAMEL_OPERATOR_ID) and gives it its namespace, address, memory limit and
// processors from the downward API.
func operatorEnv(c Config) []corev1.EnvVar {
	field := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}
	}
	return []corev1.EnvVar{
		{Name: "OPERATOR_ID", Value: c.ID},
		{Name: "KAMEL_OPERATOR_ID", Value: c.ID},
		{Name: "POD_NAMESPACE", ValueFrom: field("metadata.namespace")},
		{Name: "POD_NAME", ValueFrom: field("metadata.name")},
		{Name: "POD_IP", ValueFrom: field("status.podIP")},
		{Name: MemoryLimitEnv, ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory",
			Divisor: resource.MustParse("1")}}},
		{Name: ProcessorsEnv, ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu",
			Divisor: resource.MustParse("1")}}},
	}
}

// Restricted is a container security context that PodSecurity "restricted"
// admits: non-root, read-only root filesystem, no capabilities, no
// privilege escalation, the runtime's default seccomp profile.
func Restricted() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr.To(true),
		ReadOnlyRootFilesystem:   ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func deployment(c Config) *appsv1.Deployment {
	name := operatorName(c.ID)
	probe := func(path string, failures int32) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: path, Port: intstr.FromString("probes")}},
			InitialDelaySeconds: 2, PeriodSeconds: 5, TimeoutSeconds: 2, FailureThreshold: failures}
	}
	resources := c.Resources
	if resources.Requests == nil && resources.Limits == nil {
		resources = DefaultResources()
	}
	replicas := c.Replicas
	if replicas == nil {
		replicas = ptr.To[int32](1)
	}
	var pullSecrets []corev1.LocalObjectReference
	for _, s := range c.ImagePullSecrets {
		pullSecrets = append(pullSecrets, corev1.LocalObjectReference{Name: s})
	}
	return &appsv1.Deployment{
		TypeMeta:   typeMeta("apps/v1", "Deployment"),
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.Namespace, Labels: installationLabels(c)},
		Spec: appsv1.DeploymentSpec{
			Replicas: replicas,
			Selector: &metav1.LabelSelector{MatchLabels: Labels(c.ID)},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: Labels(c.ID),
					Annotations: map[string]string{"kubectl.kubernetes.io/default-container": "operator"}},
				Spec: corev1.PodSpec{
					ServiceAccountName: name,
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						RunAsUser:      ptr.To[int64](OperatorUID),
						RunAsGroup:     ptr.To[int64](OperatorUID),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					NodeSelector:     c.NodeSelector,
					Tolerations:      c.Tolerations,
					ImagePullSecrets: pullSecrets,
					Containers: []corev1.Container{{
						Name:            OperatorContainer,
						Image:           c.Image,
						ImagePullPolicy: corev1.PullIfNotPresent,
						Args:            operatorArgs(c),
						Env:             operatorEnv(c),
						Ports: []corev1.ContainerPort{
							{Name: "metrics", ContainerPort: MetricsPort, Protocol: corev1.ProtocolTCP},
							{Name: "probes", ContainerPort: ProbesPort, Protocol: corev1.ProtocolTCP},
						},
						LivenessProbe:   probe("/healthz", 6),
						ReadinessProbe:  probe("/readyz", 3),
						Resources:       resources,
						SecurityContext: Restricted(),
						VolumeMounts:    []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}},
					}},
					Volumes: []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
				},
			},
		},
	}
}

// metricsService exposes the operator's metrics for scraping.
func metricsService(c Config) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   typeMeta("v1", "Service"),
		ObjectMeta: metav1.ObjectMeta{Name: MetricsServiceName(c.ID), Namespace: c.Namespace, Labels: installationLabels(c)},
		Spec: corev1.ServiceSpec{
			Selector: Labels(c.ID),
			Ports: []corev1.ServicePort{{Name: "metrics", Port: MetricsPort, TargetPort: intstr.FromString("metrics"),
				Protocol: corev1.ProtocolTCP}},
		},
	}
}

// describe names an object for messages: kind and namespaced name.
func describe(o client.Object) string {
	kind := o.GetObjectKind().GroupVersionKind().Kind
	if o.GetNamespace() == "" {
		return fmt.Sprintf("%s %s", kind, o.GetName())
	}
	return fmt.Sprintf("%s %s/%s", kind, o.GetNamespace(), o.GetName())
}
