package apply

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func TestAConfigurationHoldsWhatTheObjectSetsButItsStatus(t *testing.T) {
	g := NewWithT(t)
	d := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "it", Namespace: "ns"},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(int32(2))},
		Status:     appsv1.DeploymentStatus{ReadyReplicas: 2}}
	cfg, err := Configuration(d)
	g.Expect(err).NotTo(HaveOccurred())
	content := cfg.(runtime.Unstructured).UnstructuredContent()
	g.Expect(content).NotTo(HaveKey("status"))
	g.Expect(content["metadata"]).NotTo(HaveKey("creationTimestamp"))
	g.Expect(content["spec"]).To(HaveKeyWithValue("replicas", int64(2)))

	_, err = Configuration(&appsv1.Deployment{})
	g.Expect(err).To(MatchError(ContainSubstring("apiVersion and kind must be set")))
}

func TestStoredReadsTheObjectAnApplyAnsweredWith(t *testing.T) {
	g := NewWithT(t)
	d := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "it", Namespace: "ns"}}
	cfg, err := Configuration(d)
	g.Expect(err).NotTo(HaveOccurred())
	// What the API server answers replaces the configuration's content.
	cfg.(runtime.Unstructured).SetUnstructuredContent(map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "it", "namespace": "ns", "generation": int64(3)},
		"status":   map[string]any{"observedGeneration": int64(3), "readyReplicas": int64(2)},
	})
	stored := &appsv1.Deployment{}
	g.Expect(Stored(cfg, stored)).To(Succeed())
	g.Expect(stored.Generation).To(Equal(int64(3)))
	g.Expect(stored.Status.ObservedGeneration).To(Equal(int64(3)))
	g.Expect(stored.Status.ReadyReplicas).To(Equal(int32(2)))

	cfg.(runtime.Unstructured).SetUnstructuredContent(map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "spec": "not an object"})
	g.Expect(Stored(cfg, &appsv1.Deployment{})).To(MatchError(ContainSubstring("reading the applied Deployment")))
}
