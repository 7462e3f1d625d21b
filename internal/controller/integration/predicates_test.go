package integration

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
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
