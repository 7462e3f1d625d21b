package packaging

import (
	"encoding/base64"
	"fmt"
	"path"
	"strings"

	"github.com/blang/semver/v4"
	opversion "github.com/operator-framework/api/pkg/lib/version"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/monitoring"
)

// BundleDir is the OLM bundle's directory.
const BundleDir = "deploy/olm/bundle"

// OLMPackage and OLMChannel are the bundle's package and its one channel, the catalog's default.
const (
	OLMPackage = "caravan"
	OLMChannel = "candidate-v0"
)

// SkipRangeAnnotation is the CSV annotation naming the versions a bundle upgrades from directly.
const SkipRangeAnnotation = "olm.skipRange"

// BundleAnnotations are the bundle's metadata/annotations.yaml, and the labels of its image: the
// registry+v1 format, where its manifests and metadata are, its package and channels.
func BundleAnnotations() map[string]string {
	return map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1":       "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1":       "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":        "metadata/",
		"operators.operatorframework.io.bundle.package.v1":         OLMPackage,
		"operators.operatorframework.io.bundle.channels.v1":        OLMChannel,
		"operators.operatorframework.io.bundle.channel.default.v1": OLMChannel,
	}
}

// CSVName is the name of the bundle's ClusterServiceVersion at version v: caravan.v1.2.3.
func CSVName(v semver.Version) string { return OLMPackage + ".v" + v.String() }

// SkipRange is the olm.skipRange of the bundle at version v: every earlier version, so that OLM
// upgrades any of them to v at once. A version below 0.0.0 (0.0.0-dev) has none.
func SkipRange(v semver.Version) string {
	if !v.GT(semver.Version{}) {
		return ""
	}
	return ">=0.0.0 <" + v.String()
}

// OLMConfig is what the OLM bundle installs: the default operator, camel-k, of the namespaces
// OLM targets. OLM installs no admission policy and no Kamelet; the operator registers itself
// and creates its platform.
func OLMConfig(r Release) install.Config {
	c := Base(r)
	c.Namespace, c.SkipAdmission, c.SkipKamelets = "placeholder", true, true
	return c
}

// BundleVersion is version as the semantic version a ClusterServiceVersion
// needs: v1.2.3 gives 1.2.3, anything else 0.0.0-<version>.
func BundleVersion(version string) (semver.Version, error) {
	if v, err := semver.ParseTolerant(version); err == nil {
		return v, nil
	}
	return semver.Parse("0.0.0-" + strings.ReplaceAll(version, "_", "-"))
}

// olmBundle adds the OLM bundle to files. The bundle holds the
// ClusterServiceVersion (the Deployment and rights of OLMConfig), the
// CRDs, the objects OLM installs as they are (the metrics Service, the
// user and reader roles), and the bundle's annotations.
func olmBundle(files map[string][]byte, r Release) error {
	v, err := BundleVersion(r.Version)
	if err != nil {
		return fmt.Errorf("the bundle version of %q: %w", r.Version, err)
	}
	replaces, err := replacedCSV(r.Replaces, v)
	if err != nil {
		return err
	}
	c := OLMConfig(r)
	objs, err := install.Manifests(c)
	if err != nil {
		return err
	}
	cluster, namespaced, err := install.OLMPermissions(c.ID)
	if err != nil {
		return err
	}
	manifests := path.Join(BundleDir, "manifests")
	b := bundleContents{files: files, manifests: manifests, config: c, cluster: cluster, namespaced: namespaced}
	for _, o := range objs {
		if err := b.add(o); err != nil {
			return err
		}
	}
	csv := clusterServiceVersion(c, v, b.strategy, b.owned)
	csv.Spec.Replaces = replaces
	if skip := SkipRange(v); skip != "" {
		csv.Annotations[SkipRangeAnnotation] = skip
	}
	if err := addDocument(files, path.Join(manifests, OLMPackage+".clusterserviceversion.yaml"), csv); err != nil {
		return err
	}
	annotations, err := yaml.Marshal(map[string]any{"annotations": BundleAnnotations()})
	if err != nil {
		return err
	}
	files[path.Join(BundleDir, "metadata", "annotations.yaml")] = append([]byte(header), annotations...)
	return olmAdmission(files)
}

// replacedCSV is the CSV name of the release previous, which the bundle at version v replaces; ""
// when previous is "". It refuses a previous release that is not earlier than v.
func replacedCSV(previous string, v semver.Version) (string, error) {
	if previous == "" {
		return "", nil
	}
	p, err := BundleVersion(previous)
	if err != nil {
		return "", fmt.Errorf("the bundle version of the replaced release %q: %w", previous, err)
	}
	if !p.LT(v) {
		return "", fmt.Errorf("the bundle of %s cannot replace %s: it is not an earlier version", v, p)
	}
	return CSVName(p), nil
}

// OLMAdmissionDir holds the admission policies for a cluster whose operator OLM installed, which
// installs none: policies.yaml for Kubernetes 1.36 on, validating-only-policies.yaml for 1.30 to 1.35.
const OLMAdmissionDir = "deploy/olm/admission"

// olmAdmission adds the admission policies that every operator shares to files, under
// OLMAdmissionDir, as `caravan install` applies them with and without MutatingAdmissionPolicy.
func olmAdmission(files map[string][]byte) error {
	for name, objs := range map[string][]client.Object{
		"policies.yaml":                 install.AdmissionPolicies(),
		"validating-only-policies.yaml": install.ValidatingOnlyAdmissionPolicies(),
	} {
		b := []byte(header)
		for _, o := range objs {
			data, err := document(o)
			if err != nil {
				return err
			}
			b = append(b, data...)
		}
		files[path.Join(OLMAdmissionDir, name)] = b
	}
	return nil
}

// bundleContents sorts install's objects into the bundle's manifests and its install strategy.
type bundleContents struct {
	files               map[string][]byte
	manifests           string // the directory of the bundle's manifests
	config              install.Config
	cluster, namespaced []rbacv1.PolicyRule // the operator's rights, from install.OLMPermissions

	strategy operatorsv1alpha1.StrategyDetailsDeployment // set by add
	owned    []operatorsv1alpha1.CRDDescription          // set by add
}

// add puts object o in the bundle: as a manifest, in the install strategy, or not at all.
func (b *bundleContents) add(o client.Object) error {
	switch o := o.(type) {
	case *apiextensionsv1.CustomResourceDefinition:
		b.owned = append(b.owned, crdDescription(o))
		return addDocument(b.files, path.Join(b.manifests, o.Name+".yaml"), o)
	case *appsv1.Deployment:
		spec := *o.Spec.DeepCopy()
		watchTargetNamespaces(&spec.Template.Spec.Containers[0])
		b.strategy.DeploymentSpecs = append(b.strategy.DeploymentSpecs,
			operatorsv1alpha1.StrategyDeploymentSpec{Name: o.Name, Label: o.Labels, Spec: spec})
	case *rbacv1.ClusterRole:
		if o.Name != install.ClusterRoleName(b.config.ID, b.config.Namespace) {
			return addDocument(b.files, path.Join(b.manifests, strings.ReplaceAll(o.Name, ":", "-")+".clusterrole.yaml"), o)
		}
		b.strategy.ClusterPermissions = append(b.strategy.ClusterPermissions,
			operatorsv1alpha1.StrategyDeploymentPermissions{ServiceAccountName: b.config.ID + "-operator", Rules: b.cluster})
	case *rbacv1.Role:
		b.strategy.Permissions = append(b.strategy.Permissions,
			operatorsv1alpha1.StrategyDeploymentPermissions{ServiceAccountName: b.config.ID + "-operator", Rules: b.namespaced})
	case *rbacv1.ClusterRoleBinding:
		if o.Name == install.ReaderRole {
			return addDocument(b.files, path.Join(b.manifests, o.Name+".clusterrolebinding.yaml"), o)
		}
	case *corev1.Service:
		svc := o.DeepCopy()
		svc.Namespace = ""
		return addDocument(b.files, path.Join(b.manifests, o.Name+".service.yaml"), svc)
	}
	return nil
}

// clusterServiceVersion is the bundle's ClusterServiceVersion for c at version v.
func clusterServiceVersion(c install.Config, v semver.Version, strategy operatorsv1alpha1.StrategyDetailsDeployment,
	owned []operatorsv1alpha1.CRDDescription) *operatorsv1alpha1.ClusterServiceVersion {
	return &operatorsv1alpha1.ClusterServiceVersion{
		TypeMeta: metav1.TypeMeta{APIVersion: operatorsv1alpha1.SchemeGroupVersion.String(), Kind: operatorsv1alpha1.ClusterServiceVersionKind},
		ObjectMeta: metav1.ObjectMeta{Name: CSVName(v), Annotations: map[string]string{
			"capabilities":   "Basic Install",
			"categories":     "Integration & Delivery",
			"containerImage": c.Image,
			"description":    "Runs Apache Camel integrations the way Camel K does, with many operators on one cluster",
			"alm-examples":   almExamples,
			"repository":     monitoring.ProjectHome,
			// Kits and Builds are what the operators make; users write Integrations, Pipes and Kamelets.
			"operators.operatorframework.io/internal-objects": `["integrationkits.camel.apache.org","builds.camel.apache.org"]`,
		}},
		Spec: operatorsv1alpha1.ClusterServiceVersionSpec{
			DisplayName: "Caravan",
			Description: "Caravan runs Apache Camel integrations (Camel K's Integration, Pipe and Kamelet resources) " +
				"with many operators on one cluster: each resource is owned by the operator its " +
				"camel.apache.org/operator.id annotation names. This bundle installs the default operator, " +
				"camel-k (OPERATOR_ID and KAMEL_OPERATOR_ID), which serves the namespaces its OperatorGroup targets.",
			Version:  opversion.OperatorVersion{Version: v},
			Maturity: "alpha",
			// The bundle installs no admission policy; its CRDs' transition rules need 1.29, and 1.30 is
			// the oldest release Caravan's admission policies and tests cover.
			MinKubeVersion: install.MinValidatingAdmissionVersion.String() + ".0",
			Keywords:       []string{"camel", "camel-k", "integration", "operator"},
			Provider:       operatorsv1alpha1.AppLink{Name: "The Caravan Authors"},
			Maintainers:    []operatorsv1alpha1.Maintainer{{Name: "The Caravan Authors", Email: "maintainers@caravan.dev"}},
			Icon:           []operatorsv1alpha1.Icon{{Data: base64.StdEncoding.EncodeToString([]byte(icon)), MediaType: "image/svg+xml"}},
			Links:          []operatorsv1alpha1.AppLink{{Name: "Source and documentation", URL: monitoring.ProjectHome}},
			// Each mode maps to --watch-namespaces (watchTargetNamespaces).
			InstallModes: []operatorsv1alpha1.InstallMode{
				{Type: operatorsv1alpha1.InstallModeTypeOwnNamespace, Supported: true},
				{Type: operatorsv1alpha1.InstallModeTypeSingleNamespace, Supported: true},
				{Type: operatorsv1alpha1.InstallModeTypeMultiNamespace, Supported: true},
				{Type: operatorsv1alpha1.InstallModeTypeAllNamespaces, Supported: true},
			},
			InstallStrategy:           operatorsv1alpha1.NamedInstallStrategy{StrategyName: operatorsv1alpha1.InstallStrategyNameDeployment, StrategySpec: strategy},
			CustomResourceDefinitions: operatorsv1alpha1.CustomResourceDefinitions{Owned: owned},
			RelatedImages:             relatedImages(c.Image),
		},
	}
}

// TargetNamespacesEnv holds the namespaces of the bundle's OperatorGroup, comma-separated, or
// "" for all: OLM writes them in the pod's olm.targetNamespaces annotation.
const TargetNamespacesEnv = "WATCH_NAMESPACE"

// watchTargetNamespaces makes the operator container serve the namespaces OLM targets: it
// reads them from the pod's annotation into TargetNamespacesEnv, which --watch-namespaces
// takes. Empty, for all namespaces, the flag serves every namespace.
func watchTargetNamespaces(container *corev1.Container) {
	container.Env = append(container.Env, corev1.EnvVar{Name: TargetNamespacesEnv, ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['olm.targetNamespaces']"}}})
	container.Args = append(container.Args, "--watch-namespaces=$("+TargetNamespacesEnv+")")
}

// icon is the bundle's icon: three camels in a row, a caravan.
const icon = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 96 32"><g fill="#c8792b">` +
	`<path d="M4 28v-8l4-6h4l2 4 3-6h3l3 6h2v10h-2v-6h-12v6z"/>` +
	`<path d="M36 28v-8l4-6h4l2 4 3-6h3l3 6h2v10h-2v-6h-12v6z"/>` +
	`<path d="M68 28v-8l4-6h4l2 4 3-6h3l3 6h2v10h-2v-6h-12v6z"/></g></svg>`

// almExamples are the examples OLM's consoles offer to create, one of each owned kind: a YAML
// route, and a Pipe from the catalog's timer-source to its log-sink, both for the bundle's
// operator, camel-k; the settings of camel-k (its registration and platform) and of a profile;
// a Kamelet; an external kit; and the kinds Camel K's operator writes (a Build, a CamelCatalog).
const almExamples = `[
  {"apiVersion": "camel.apache.org/v1", "kind": "Integration",
   "metadata": {"name": "hello", "annotations": {"camel.apache.org/operator.id": "camel-k"}},
   "spec": {"flows": [{"from": {"uri": "timer:tick?period=5000", "steps": [{"log": "Hello from Caravan"}]}}]}},
  {"apiVersion": "camel.apache.org/v1", "kind": "Pipe",
   "metadata": {"name": "timer-to-log", "annotations": {"camel.apache.org/operator.id": "camel-k"}},
   "spec": {"source": {"ref": {"apiVersion": "camel.apache.org/v1", "kind": "Kamelet", "name": "timer-source"},
                       "properties": {"message": "Hello from a Pipe"}},
            "sink": {"ref": {"apiVersion": "camel.apache.org/v1", "kind": "Kamelet", "name": "log-sink"}}}},
  {"apiVersion": "camel.apache.org/v1alpha1", "kind": "KameletBinding",
   "metadata": {"name": "timer-to-log-binding", "annotations": {"camel.apache.org/operator.id": "camel-k"}},
   "spec": {"source": {"ref": {"apiVersion": "camel.apache.org/v1", "kind": "Kamelet", "name": "timer-source"},
                       "properties": {"message": "Hello from a KameletBinding"}},
            "sink": {"ref": {"apiVersion": "camel.apache.org/v1", "kind": "Kamelet", "name": "log-sink"}}}},
  {"apiVersion": "camel.apache.org/v1alpha1", "kind": "IntegrationOperator",
   "metadata": {"name": "camel-k"},
   "spec": {"default": true}},
  {"apiVersion": "camel.apache.org/v1", "kind": "IntegrationPlatform",
   "metadata": {"name": "camel-k", "annotations": {"camel.apache.org/operator.id": "camel-k"}},
   "spec": {"build": {"registry": {"address": "registry.example.com", "organization": "camel"}}}},
  {"apiVersion": "camel.apache.org/v1", "kind": "IntegrationProfile",
   "metadata": {"name": "small-jvm", "annotations": {"camel.apache.org/operator.id": "camel-k"}},
   "spec": {"traits": {"container": {"limitMemory": "512Mi"}, "jvm": {"options": ["-Xmx256m"]}}}},
  {"apiVersion": "camel.apache.org/v1", "kind": "Kamelet",
   "metadata": {"name": "hello-source", "labels": {"camel.apache.org/kamelet.type": "source"}},
   "spec": {"definition": {"title": "Hello", "description": "Sends a message every five seconds",
                           "properties": {"message": {"title": "Message", "type": "string", "default": "Hello"}}},
            "template": {"from": {"uri": "timer:hello?period=5000",
                                  "steps": [{"setBody": {"constant": "{{message}}"}}, {"to": "kamelet:sink"}]}}}},
  {"apiVersion": "camel.apache.org/v1", "kind": "IntegrationKit",
   "metadata": {"name": "external-kit", "labels": {"camel.apache.org/kit.type": "external"},
                "annotations": {"camel.apache.org/operator.id": "camel-k"}},
   "spec": {"image": "registry.example.com/camel/external-kit:1.0"}},
  {"apiVersion": "camel.apache.org/v1", "kind": "Build",
   "metadata": {"name": "external-kit", "annotations": {"camel.apache.org/operator.id": "camel-k"}},
   "spec": {"timeout": "10m"}},
  {"apiVersion": "camel.apache.org/v1", "kind": "CamelCatalog",
   "metadata": {"name": "camel-catalog-3.15.3"},
   "spec": {"runtime": {"version": "3.15.3", "provider": "quarkus"}}}
]`

// relatedImages lists the operator image for mirroring into a disconnected cluster, when it is
// pinned by digest, as a released bundle's is. A tag could move after the mirror copied it.
func relatedImages(operator string) []operatorsv1alpha1.RelatedImage {
	if !strings.Contains(operator, "@sha256:") {
		return nil
	}
	return []operatorsv1alpha1.RelatedImage{{Name: "operator", Image: operator}}
}

// crdDescription describes an owned CRD by its storage version.
func crdDescription(d *apiextensionsv1.CustomResourceDefinition) operatorsv1alpha1.CRDDescription {
	desc := operatorsv1alpha1.CRDDescription{Name: d.Name, Kind: d.Spec.Names.Kind, DisplayName: d.Spec.Names.Kind}
	for _, v := range d.Spec.Versions {
		if v.Storage {
			desc.Version = v.Name
			if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
				desc.Description = v.Schema.OpenAPIV3Schema.Description
			}
		}
	}
	if desc.Description == "" {
		desc.Description = d.Spec.Names.Kind + " of Camel K's API"
	}
	return desc
}

// addDocument adds obj as a YAML file of one document at p.
func addDocument(files map[string][]byte, p string, obj client.Object) error {
	data, err := yaml.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", obj.GetName(), err)
	}
	files[p] = append([]byte(header), data...)
	return nil
}
