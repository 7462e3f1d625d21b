package install

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
)

var fleetDefaults = FleetDefaults{Image: "registry.test:5000/caravan/operator:v1", Registry: "registry.test:5000", Version: "v1"}

func declared(spec camelv1alpha1.IntegrationOperatorSpec) *camelv1alpha1.IntegrationOperator {
	return &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: "tenant-a"}, Spec: spec}
}

func TestADeclaredOperatorGetsItsSpecOverTheFleetsDefaults(t *testing.T) {
	g := NewWithT(t)
	c, err := DeclaredConfig(declared(camelv1alpha1.IntegrationOperatorSpec{Namespace: "ops"}), fleetDefaults)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.ID).To(Equal("tenant-a"))
	g.Expect(c.Namespace).To(Equal("ops"))
	g.Expect(c.Image).To(Equal(fleetDefaults.Image))
	g.Expect(c.Version).To(BeEmpty(), "no version is declared: the image's own runs")
	g.Expect(c.Registry).To(Equal(fleetDefaults.Registry))
	g.Expect(c.SkipAdmission).To(BeFalse(), "admission is on unless the spec turns it off")

	limits := corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}
	c, err = DeclaredConfig(declared(camelv1alpha1.IntegrationOperatorSpec{
		Namespace: "ops", Version: "v2", Replicas: ptr.To[int32](2), Admission: ptr.To(false),
		WatchNamespaces: []string{"team-a"}, Resources: &corev1.ResourceRequirements{Limits: limits},
		NodeSelector: map[string]string{"pool": "ops"},
	}), fleetDefaults)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Image).To(Equal("registry.test:5000/caravan/operator:v2"), "spec.version is the tag of the fleet's image")
	g.Expect(c.Version).To(Equal("v2"))
	g.Expect(c.SkipAdmission).To(BeTrue())
	g.Expect(c.Replicas).To(HaveValue(BeEquivalentTo(2)))
	g.Expect(c.WatchNamespaces).To(Equal([]string{"team-a"}))
	g.Expect(c.Resources.Limits).To(Equal(limits))
	g.Expect(c.NodeSelector).To(HaveKeyWithValue("pool", "ops"))

	c, err = DeclaredConfig(declared(camelv1alpha1.IntegrationOperatorSpec{Namespace: "ops", Version: "v2",
		Image: "other.test/op@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}), fleetDefaults)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Image).To(HavePrefix("other.test/op@sha256:"), "spec.image wins over spec.version")
}

func TestADeclarationThatCannotRunIsRefusedWithWhatIsWrong(t *testing.T) {
	g := NewWithT(t)
	_, err := DeclaredConfig(declared(camelv1alpha1.IntegrationOperatorSpec{}), fleetDefaults)
	g.Expect(err).To(MatchError(ContainSubstring("is not declared")))
	_, err = DeclaredConfig(declared(camelv1alpha1.IntegrationOperatorSpec{Namespace: "ops", Image: "UPPER CASE/x:"}), fleetDefaults)
	g.Expect(err).To(MatchError(ContainSubstring(`spec.image "UPPER CASE/x:" is no image reference`)))
	_, err = DeclaredConfig(declared(camelv1alpha1.IntegrationOperatorSpec{Namespace: "ops", Version: "not a tag"}), fleetDefaults)
	g.Expect(err).To(MatchError(ContainSubstring(`spec.version "not a tag" cannot be an image tag`)))
}

func TestTheFleetHoldsEveryRightItGrantsAnOperator(t *testing.T) {
	g := NewWithT(t)
	fleetObjs, err := FleetManifests(FleetConfig{Namespace: "caravan-system", Image: fleetDefaults.Image})
	g.Expect(err).NotTo(HaveOccurred())
	var fleetRules []rbacv1.PolicyRule
	var d *appsv1.Deployment
	for _, o := range fleetObjs {
		switch o := o.(type) {
		case *rbacv1.ClusterRole:
			fleetRules = o.Rules
		case *appsv1.Deployment:
			d = o
		}
	}
	g.Expect(d).NotTo(BeNil())
	g.Expect(d.Spec.Template.Spec.ServiceAccountName).To(Equal(FleetName))
	g.Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElements("fleet", "--operator-image="+fleetDefaults.Image))
	opObjs, err := Manifests(Config{ID: "tenant-a", Namespace: "ops", Image: fleetDefaults.Image, WatchNamespaces: []string{"team-a"}})
	g.Expect(err).NotTo(HaveOccurred())
	for _, o := range opObjs {
		var rules []rbacv1.PolicyRule
		switch o := o.(type) {
		case *rbacv1.ClusterRole:
			rules = o.Rules
		case *rbacv1.Role:
			rules = o.Rules
		}
		for _, r := range rules {
			for _, verb := range r.Verbs {
				for _, res := range r.Resources {
					for _, group := range r.APIGroups {
						g.Expect(allows(fleetRules, group, res, verb)).To(BeTrue(),
							"%s grants %s on %s.%s, which the fleet lacks (RBAC would refuse it)", o.GetName(), verb, res, group)
					}
				}
			}
		}
	}
}

// allows tells whether rules grant verb on resource of group, anywhere.
func allows(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	for _, r := range rules {
		if has(r.APIGroups, group) && has(r.Resources, resource) && has(r.Verbs, verb) && len(r.ResourceNames) == 0 {
			return true
		}
	}
	return false
}

func has(list []string, s string) bool {
	for _, v := range list {
		if v == s || v == "*" {
			return true
		}
	}
	return false
}
