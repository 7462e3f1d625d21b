package kameletcontroller

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/config/kamelets"
	"github.com/caravan-dev/caravan/internal/kamelet"
)

func TestWhichOperatorValidatesAKamelet(t *testing.T) {
	mine := map[string]string{camelv1.OperatorIDAnnotation: "tenant-a"}
	theirs := map[string]string{camelv1.OperatorIDAnnotation: "tenant-b"}
	cases := []struct {
		name        string
		namespace   string
		annotations map[string]string
		validates   bool
	}{
		{name: "an unannotated Kamelet in the operator's namespace", namespace: "ops", validates: true},
		{name: "an unannotated Kamelet elsewhere", namespace: "apps", validates: false},
		{name: "a Kamelet annotated for the operator, elsewhere", namespace: "apps", annotations: mine, validates: true},
		{name: "a Kamelet annotated for another operator, in the operator's namespace", namespace: "ops", annotations: theirs, validates: false},
		{name: "a Kamelet annotated for another operator, elsewhere", namespace: "apps", annotations: theirs, validates: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(Validates(tc.namespace, tc.annotations, "tenant-a", "ops")).To(Equal(tc.validates))
		})
	}
}

func TestTheCacheHoldsTheOperatorsNamespaceAndLabelledKamelets(t *testing.T) {
	g := NewWithT(t)
	mine := labels.SelectorFromSet(labels.Set{camelv1.OperatorIDLabel: "tenant-a"}).String()

	all := CacheByObject("tenant-a", "ops", nil)
	g.Expect(all.Namespaces).To(HaveLen(2))
	g.Expect(all.Namespaces["ops"].LabelSelector.Empty()).To(BeTrue(), "every Kamelet of the operator's namespace")
	g.Expect(all.Namespaces[cache.AllNamespaces].LabelSelector.String()).To(Equal(mine))

	some := CacheByObject("tenant-a", "ops", []string{"apps", "ops"})
	g.Expect(some.Namespaces).To(HaveLen(2))
	g.Expect(some.Namespaces).NotTo(HaveKey(cache.AllNamespaces))
	g.Expect(some.Namespaces["ops"].LabelSelector.Empty()).To(BeTrue())
	g.Expect(some.Namespaces["apps"].LabelSelector.String()).To(Equal(mine))
}

// validated runs the reconcileDefinition step on k and computes its status.
func validated(k *camelv1.Kamelet) {
	s := &scope{k: k}
	_, _ = reconcileDefinition(context.Background(), s)
	computeStatus(s)
}

func TestAValidKameletIsReadyWithItsProperties(t *testing.T) {
	g := NewWithT(t)
	catalog, err := kamelets.Catalog()
	g.Expect(err).NotTo(HaveOccurred())
	var timer *camelv1.Kamelet
	for _, k := range catalog {
		if k.Name == "timer-source" {
			timer = k
		}
	}
	g.Expect(timer).NotTo(BeNil())
	timer.Generation = 3
	validated(timer)
	g.Expect(timer.Status.Phase).To(Equal(camelv1.KameletPhaseReady))
	g.Expect(timer.Status.ObservedGeneration).To(Equal(int64(3)))
	g.Expect(timer.Status.Properties).To(Equal([]camelv1.KameletProperty{{Name: "contentType", Default: "text/plain"}, {Name: "message"},
		{Name: "period", Default: "1000"}, {Name: "repeatCount"}}))
	ready := meta.FindStatusCondition(timer.Status.Conditions, camelv1.ConditionReady)
	g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(ready.ObservedGeneration).To(Equal(int64(3)))
	g.Expect(meta.FindStatusCondition(timer.Status.Conditions, camelv1.ConditionStalled)).To(BeNil())
}

func TestAnInvalidKameletIsInErrorWithEveryProblem(t *testing.T) {
	g := NewWithT(t)
	k := &camelv1.Kamelet{ObjectMeta: metav1.ObjectMeta{Name: "Bad.Name", Generation: 1}}
	problems := kamelet.Validate(k)
	g.Expect(len(problems)).To(BeNumerically(">=", 2))
	validated(k)
	g.Expect(k.Status.Phase).To(Equal(camelv1.KameletPhaseError))
	ready := meta.FindStatusCondition(k.Status.Conditions, camelv1.ConditionReady)
	g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(ready.Reason).To(Equal(kamelet.ReasonInvalidName))
	g.Expect(ready.Message).To(ContainSubstring(`name "Bad.Name"`))
	g.Expect(ready.Message).To(ContainSubstring("spec.template is missing"))
	g.Expect(meta.IsStatusConditionTrue(k.Status.Conditions, camelv1.ConditionStalled)).To(BeTrue())

	t.Log("once fixed, it is Ready and no longer stalled")
	k.Name = "good-name"
	k.Spec.Template = &camelv1.RawObject{}
	k.Spec.Template.Raw = []byte(`{"from":{"uri":"kamelet:source","steps":[{"to":"log:x"}]}}`)
	validated(k)
	g.Expect(k.Status.Phase).To(Equal(camelv1.KameletPhaseReady))
	g.Expect(meta.FindStatusCondition(k.Status.Conditions, camelv1.ConditionStalled)).To(BeNil())
}
