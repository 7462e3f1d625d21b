package packaging

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	olmmanifests "github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/caravan-dev/caravan/internal/install"
)

func TestTheOLMBundlePassesOperatorFrameworkValidation(t *testing.T) {
	g := NewWithT(t)
	bundle, err := olmmanifests.GetBundleFromDir(filepath.Join(sourceRoot(), BundleDir))
	g.Expect(err).NotTo(HaveOccurred())
	// The default suite, and the optional one: OperatorHub's, good practices, the API
	// deprecations of the Kubernetes versions the bundle claims.
	validators := append(validation.DefaultBundleValidators, validation.OperatorHubV2Validator,
		validation.StandardCapabilitiesValidator, validation.StandardCategoriesValidator,
		validation.GoodPracticesValidator, validation.AlphaDeprecatedAPIsValidator)
	results := validators.Validate(bundle)
	checked := 0
	for _, r := range results {
		checked++
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
	g.Expect(checked).To(BeNumerically(">", 0))
	g.Expect(bundle.V1CRDs).To(HaveLen(10))
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
