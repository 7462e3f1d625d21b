package integrationcontroller

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/render"
)

func TestOnlyAStatusWriteThatNamesAnotherKitIsReconciledAgain(t *testing.T) {
	kit := func(name string) *camelv1.KitReference {
		if name == "" {
			return nil
		}
		return &camelv1.KitReference{Namespace: "ns", Name: name}
	}
	update := func(before, after string, change func(*camelv1.Integration)) event.TypedUpdateEvent[client.Object] {
		old := &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Name: "it", Namespace: "ns", Generation: 1}}
		old.Status.IntegrationKit = kit(before)
		cur := old.DeepCopy()
		cur.Status.IntegrationKit = kit(after)
		if change != nil {
			change(cur)
		}
		return event.TypedUpdateEvent[client.Object]{ObjectOld: old, ObjectNew: cur}
	}
	cases := []struct {
		name  string
		event event.TypedUpdateEvent[client.Object]
		want  bool
	}{
		{"the first write naming a kit", update("", "kit-a", nil), true},
		{"a write naming another kit", update("kit-a", "kit-b", nil), true},
		{"a write dropping the kit", update("kit-a", "", nil), true},
		{"a write that keeps the kit", update("kit-a", "kit-a", func(it *camelv1.Integration) {
			it.Status.Phase = camelv1.IntegrationPhaseRunning
		}), false},
		{"a write without a kit", update("", "", func(it *camelv1.Integration) {
			it.Status.Phase = camelv1.IntegrationPhaseDeploying
		}), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(kitNamed.Update(tc.event)).To(Equal(tc.want))
		})
	}
}

func TestTheCreationOfAConfigMapOrServiceIsNotReconciledButItsChangesAre(t *testing.T) {
	g := NewWithT(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "it-camel", Namespace: "ns"}}
	changed := cm.DeepCopy()
	changed.Data = map[string]string{"a": "b"}
	g.Expect(notCreated.Create(event.TypedCreateEvent[client.Object]{Object: cm})).To(BeFalse())
	g.Expect(notCreated.Update(event.TypedUpdateEvent[client.Object]{ObjectOld: cm, ObjectNew: changed})).To(BeTrue())
	g.Expect(notCreated.Delete(event.TypedDeleteEvent[client.Object]{Object: cm})).To(BeTrue())
}

func TestOnlyTheDeploymentChangesThatTheIntegrationFollowsAreReconciled(t *testing.T) {
	rolling := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "it", Namespace: "ns", Generation: 1,
		Labels:      map[string]string{render.AppliedHashLabel: "1", camelv1.OperatorIDLabel: "a"},
		Annotations: map[string]string{}},
		Spec:   appsv1.DeploymentSpec{Replicas: ptr.To(int32(2))},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2}}
	cases := []struct {
		name   string
		change func(*appsv1.Deployment)
		want   bool
	}{
		{"the controller observes the generation", func(d *appsv1.Deployment) {
			d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue}}
		}, false},
		{"one pod of two is ready", func(d *appsv1.Deployment) { d.Status.ReadyReplicas = 1 }, false},
		{"both pods are ready", func(d *appsv1.Deployment) {
			d.Status.ReadyReplicas, d.Status.AvailableReplicas = 2, 2
		}, true},
		{"a new spec", func(d *appsv1.Deployment) { d.Generation = 2 }, true},
		{"the Deployment controller's revision", func(d *appsv1.Deployment) {
			d.Annotations["deployment.kubernetes.io/revision"] = "1"
		}, false},
		{"another applied hash", func(d *appsv1.Deployment) { d.Labels[render.AppliedHashLabel] = "2" }, true},
		{"another operator", func(d *appsv1.Deployment) { d.Labels[camelv1.OperatorIDLabel] = "b" }, true},
		{"another owner", func(d *appsv1.Deployment) {
			d.OwnerReferences = []metav1.OwnerReference{{Name: "other", UID: "u"}}
		}, true},
		{"deletion", func(d *appsv1.Deployment) { d.DeletionTimestamp = ptr.To(metav1.Now()) }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cur := rolling.DeepCopy()
			tc.change(cur)
			got := rolloutSeen.Update(event.TypedUpdateEvent[client.Object]{ObjectOld: rolling, ObjectNew: cur})
			NewWithT(t).Expect(got).To(Equal(tc.want))
		})
	}

	g := NewWithT(t)
	ready := rolling.DeepCopy()
	ready.Status.ReadyReplicas, ready.Status.AvailableReplicas = 2, 2
	unready := ready.DeepCopy()
	unready.Status.ReadyReplicas, unready.Status.AvailableReplicas = 1, 1
	g.Expect(rolloutSeen.Update(event.TypedUpdateEvent[client.Object]{ObjectOld: ready, ObjectNew: unready})).
		To(BeTrue(), "a pod of a rolled-out Deployment that is no longer ready")
	g.Expect(rolloutSeen.Create(event.TypedCreateEvent[client.Object]{Object: rolling})).
		To(BeFalse(), "the appearance of a Deployment still rolling out")
	g.Expect(rolloutSeen.Create(event.TypedCreateEvent[client.Object]{Object: ready})).
		To(BeTrue(), "the appearance of a rolled-out Deployment")
	g.Expect(rolloutSeen.Delete(event.TypedDeleteEvent[client.Object]{Object: rolling})).To(BeTrue())
}
