package packaging

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	. "github.com/onsi/gomega"
	olmmanifests "github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	validator "github.com/operator-framework/api/pkg/validation/interfaces"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/install"
)

func TestTheOLMBundlePassesOperatorFrameworkValidation(t *testing.T) {
	bundle := validBundle(t, filepath.Join(sourceRoot(), BundleDir))
	g := NewWithT(t)
	g.Expect(bundle.V1CRDs).To(HaveLen(10))
	g.Expect(bundle.CSV.Spec.Replaces).To(BeEmpty(), "a development bundle replaces no release")
	g.Expect(bundle.CSV.Annotations).NotTo(HaveKey(SkipRangeAnnotation), "0.0.0-dev is below every release")
	data, err := os.ReadFile(filepath.Join(sourceRoot(), BundleDir, "metadata", "annotations.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	var metadata struct{ Annotations map[string]string }
	g.Expect(yaml.Unmarshal(data, &metadata)).To(Succeed())
	g.Expect(metadata.Annotations).To(Equal(BundleAnnotations()))
	g.Expect(metadata.Annotations).To(HaveKeyWithValue("operators.operatorframework.io.bundle.package.v1", "caravan"))
}

func TestAReleasedBundleUpgradesFromEveryEarlierVersion(t *testing.T) {
	operator := "registry.example:5000/caravan/operator@sha256:" + strings.Repeat("0a", 32)
	for _, tc := range []struct {
		name, version, replaces     string
		wantReplaces, wantSkipRange string
	}{
		{"a release replaces the previous one", "v0.2.0", "v0.1.0", "caravan.v0.1.0", ">=0.0.0 <0.2.0"},
		{"a release candidate replaces the previous release", "v0.2.0-rc.1", "v0.1.3", "caravan.v0.1.3", ">=0.0.0 <0.2.0-rc.1"},
		{"the first release replaces none", "v0.1.0", "", "", ">=0.0.0 <0.1.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			files, err := Generated(Release{Version: tc.version, Image: operator, Replaces: tc.replaces})
			g.Expect(err).NotTo(HaveOccurred())
			dir := t.TempDir()
			for p, data := range files {
				if rel, ok := strings.CutPrefix(p, BundleDir+"/"); ok {
					g.Expect(os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755)).To(Succeed())
					g.Expect(os.WriteFile(filepath.Join(dir, rel), data, 0o644)).To(Succeed())
				}
			}
			bundle := validBundle(t, dir)
			g.Expect(bundle.CSV.Spec.Replaces).To(Equal(tc.wantReplaces))
			g.Expect(bundle.CSV.Annotations).To(HaveKeyWithValue(SkipRangeAnnotation, tc.wantSkipRange))
			skips, err := semver.ParseRange(tc.wantSkipRange)
			g.Expect(err).NotTo(HaveOccurred())
			for v, want := range map[string]bool{"0.0.1": true, "0.0.9": true, strings.TrimPrefix(tc.version, "v"): false, "9.0.0": false} {
				g.Expect(skips(semver.MustParse(v))).To(Equal(want), "the skip range holds %s", v)
			}
			g.Expect(bundle.CSV.Spec.RelatedImages).To(ConsistOf(HaveField("Image", operator)))
		})
	}
}

func TestABundleReplacesOnlyAnEarlierRelease(t *testing.T) {
	for _, replaces := range []string{"v0.2.0", "v0.3.0", "not a version"} {
		_, err := Generated(Release{Version: "v0.2.0", Replaces: replaces})
		if err == nil {
			t.Errorf("Generated(v0.2.0, replacing %s) succeeded, want an error", replaces)
		}
	}
}

func TestTheBundleHasAnExampleOfEachKindItOwns(t *testing.T) {
	g := NewWithT(t)
	scheme := runtime.NewScheme()
	g.Expect(camelv1.AddToScheme(scheme)).To(Succeed())
	g.Expect(camelv1alpha1.AddToScheme(scheme)).To(Succeed())
	var examples []json.RawMessage
	g.Expect(json.Unmarshal([]byte(almExamples), &examples)).To(Succeed())
	kinds := map[string]bool{}
	for _, raw := range examples {
		var meta metav1.TypeMeta
		g.Expect(json.Unmarshal(raw, &meta)).To(Succeed())
		obj, err := scheme.New(meta.GroupVersionKind())
		g.Expect(err).NotTo(HaveOccurred(), "an example of %s, which the API has not", meta.GroupVersionKind())
		// Each example decodes into its kind's Go type without a field to spare.
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		g.Expect(dec.Decode(obj)).To(Succeed(), "the example of %s", meta.Kind)
		kinds[meta.Kind] = true
	}
	bundle, err := olmmanifests.GetBundleFromDir(filepath.Join(sourceRoot(), BundleDir))
	g.Expect(err).NotTo(HaveOccurred())
	for _, owned := range bundle.CSV.Spec.CustomResourceDefinitions.Owned {
		g.Expect(kinds).To(HaveKey(owned.Kind), "no example of %s", owned.Kind)
	}
}

func TestTheAdmissionPoliciesForOLMAreInstallsOwn(t *testing.T) {
	g := NewWithT(t)
	files, err := Generated(Release{Version: "dev"})
	g.Expect(err).NotTo(HaveOccurred())
	for name, want := range map[string][]client.Object{
		"policies.yaml":                 install.AdmissionPolicies(),
		"validating-only-policies.yaml": install.ValidatingOnlyAdmissionPolicies(),
	} {
		data, ok := files[filepath.Join(OLMAdmissionDir, name)]
		g.Expect(ok).To(BeTrue(), "no %s", name)
		var docs []string
		for _, o := range want {
			d, err := document(o)
			g.Expect(err).NotTo(HaveOccurred())
			docs = append(docs, string(d))
		}
		g.Expect(normalized(t, []string{string(data)})).To(Equal(normalized(t, docs)), name)
	}
}

// validBundle loads the bundle in dir with operator-framework's library and fails the test on any
// error or warning of its validators but the RBAC one explained below.
func validBundle(t *testing.T, dir string) *olmmanifests.Bundle {
	t.Helper()
	g := NewWithT(t)
	bundle, err := olmmanifests.GetBundleFromDir(dir)
	g.Expect(err).NotTo(HaveOccurred())
	// The default suite (the CSV's, the CRDs' and the bundle's), the objects', and the optional
	// ones: OperatorHub's, good practices, the API deprecations of the Kubernetes versions the
	// bundle claims. Each validator checks the objects of its type, so each object goes in.
	validators := slices.Concat(validation.DefaultBundleValidators, []validator.Validator{validation.ObjectValidator,
		validation.OperatorHubV2Validator, validation.StandardCapabilitiesValidator, validation.StandardCategoriesValidator,
		validation.GoodPracticesValidator, validation.AlphaDeprecatedAPIsValidator})
	objs := bundle.ObjectsToValidate()
	for _, r := range validators.Validate(objs...) {
		for _, e := range r.Errors {
			t.Errorf("%s: %s", r.Name, e)
		}
		for _, w := range r.Warnings {
			// RBAC rules name no API version: granting events, PodDisruptionBudgets and CronJobs
			// reads, to this validator, as using their versions that 1.25 removed. The operator uses
			// the versions that remain: v1 Events, policy/v1 PodDisruptionBudgets and batch/v1 CronJobs.
			// The validator lists the resources from a map, in any order.
			if strings.Contains(w.Error(), "deprecated and removed in v1.25") && onlyResources(w.Error(), "events", "poddisruptionbudgets", "cronjobs") {
				continue
			}
			t.Errorf("%s: warning: %s", r.Name, w)
		}
	}
	// The CSV's and the CRDs' validators judge only objects of their types: each had its own.
	g.Expect(validation.ClusterServiceVersionValidator.Validate(objs...)).To(HaveLen(1), "the CSV's validator judged the CSV")
	g.Expect(validation.CustomResourceDefinitionValidator.Validate(objs...)).To(HaveLen(len(bundle.V1CRDs)),
		"the CRDs' validator judged each CRD")
	return bundle
}

func TestTheOLMBundleRunsWhatInstallRuns(t *testing.T) {
	g := NewWithT(t)
	ch, err := LoadChart(sourceRoot())
	g.Expect(err).NotTo(HaveOccurred())
	bundle, err := olmmanifests.GetBundleFromDir(filepath.Join(sourceRoot(), BundleDir))
	g.Expect(err).NotTo(HaveOccurred())
	c := OLMConfig(Release{Version: ch.Metadata.AppVersion})
	objs, err := install.Manifests(c)
	g.Expect(err).NotTo(HaveOccurred())
	strategy := bundle.CSV.Spec.InstallStrategy.StrategySpec
	g.Expect(strategy.DeploymentSpecs).To(HaveLen(1))
	for _, o := range objs {
		if o, ok := o.(*appsv1.Deployment); ok {
			spec := strategy.DeploymentSpecs[0].Spec.DeepCopy()
			container := &spec.Template.Spec.Containers[0]
			g.Expect(container.Args).To(HaveExactElements(append(slices.Clone(o.Spec.Template.Spec.Containers[0].Args),
				"--watch-namespaces=$(WATCH_NAMESPACE)")), "the bundle's operator serves the namespaces OLM targets")
			g.Expect(container.Env).To(ContainElement(HaveField("ValueFrom.FieldRef.FieldPath", "metadata.annotations['olm.targetNamespaces']")))
			container.Args, container.Env = o.Spec.Template.Spec.Containers[0].Args, o.Spec.Template.Spec.Containers[0].Env
			g.Expect(*spec).To(Equal(o.Spec), "the bundle's Deployment is install's but for the target namespaces")
			env := o.Spec.Template.Spec.Containers[0].Env
			g.Expect(env).To(ContainElements(HaveField("Name", "OPERATOR_ID"), HaveField("Name", "KAMEL_OPERATOR_ID")))
			g.Expect(env[0].Value).To(Equal("camel-k"))
		}
	}
	for _, mode := range bundle.CSV.Spec.InstallModes {
		g.Expect(mode.Supported).To(BeTrue(), "install mode %s", mode.Type)
	}

	t.Log("the rights are those caravan install gives an operator limited to namespaces: cluster-scoped ones cluster-wide, the rest where it serves")
	limited := c
	limited.WatchNamespaces = []string{"team-a"}
	objs, err = install.Manifests(limited)
	g.Expect(err).NotTo(HaveOccurred())
	var namespaced []rbacv1.PolicyRule
	for _, o := range objs {
		switch o := o.(type) {
		case *rbacv1.ClusterRole:
			switch o.Name {
			case install.ClusterRoleName(c.ID, c.Namespace):
				g.Expect(strategy.ClusterPermissions).To(HaveLen(1))
				g.Expect(strategy.ClusterPermissions[0].Rules).To(Equal(o.Rules))
			case install.NamespacedRoleName(c.ID, c.Namespace):
				namespaced = append(namespaced, o.Rules...)
			}
		case *rbacv1.Role:
			namespaced = append(namespaced, o.Rules...)
		}
	}
	g.Expect(strategy.Permissions).To(HaveLen(1))
	g.Expect(strategy.Permissions[0].Rules).To(ConsistOf(namespaced))
	for _, r := range strategy.ClusterPermissions[0].Rules {
		for _, res := range r.Resources {
			g.Expect(install.IsClusterScoped(res)).
				To(BeTrue(), "clusterPermissions, which OLM grants cluster-wide in every mode, name namespaced %s", res)
		}
	}
}

// deprecatedResource finds each resource a deprecated-API warning names: "events: ([".
var deprecatedResource = regexp.MustCompile(`(\w+): \(\[`)

// onlyResources tells whether the deprecated-API warning w names resources, and no other.
func onlyResources(w string, resources ...string) bool {
	found := deprecatedResource.FindAllStringSubmatch(w, -1)
	if len(found) == 0 {
		return false
	}
	for _, m := range found {
		if !slices.Contains(resources, m[1]) {
			return false
		}
	}
	return true
}

func TestOnlyResourcesReadsTheDeprecatedAPIsInAnyOrder(t *testing.T) {
	for w, want := range map[string]bool{
		"Migrate the API(s) for poddisruptionbudgets: ([\"a\"]),events: ([\"b\"]),": true,
		"Migrate the API(s) for events: ([\"b\"]),poddisruptionbudgets: ([\"a\"]),": true,
		"Migrate the API(s) for events: ([\"b\"]),cronjobs: ([\"a\"]),":             false,
		"no resource named": false,
	} {
		if got := onlyResources(w, "events", "poddisruptionbudgets"); got != want {
			t.Errorf("onlyResources(%q) = %v, want %v", w, got, want)
		}
	}
}
