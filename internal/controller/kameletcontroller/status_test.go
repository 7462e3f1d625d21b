package kameletcontroller

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/controller"
)

func TestComputeStatus(t *testing.T) {
	cases := []struct {
		name    string
		failure *controller.Condition
		stalled bool // before, as a previous reconcile left it
		phase   camelv1.KameletPhase
		ready   metav1.ConditionStatus
		reason  controller.Reason
		isStuck bool
	}{
		{name: "a Kamelet with no problem is Ready",
			phase: camelv1.KameletPhaseReady, ready: metav1.ConditionTrue, reason: ReasonValid},
		{name: "a Kamelet with a problem is in Error and stalled, with the problem's reason",
			failure: controller.Because("InvalidName", `name "Bad.Name" is not a DNS label`),
			phase:   camelv1.KameletPhaseError, ready: metav1.ConditionFalse, reason: "InvalidName", isStuck: true},
		{name: "a Kamelet fixed since it was in Error is Ready and no longer stalled", stalled: true,
			phase: camelv1.KameletPhaseReady, ready: metav1.ConditionTrue, reason: ReasonValid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := &camelv1.Kamelet{ObjectMeta: metav1.ObjectMeta{Name: "k", Generation: 4}}
			if tc.stalled {
				controller.SetProgress(&k.Status.Conditions, 3, metav1.ConditionFalse, controller.Stuck, "InvalidName", "bad")
			}
			s := &scope{k: k}
			s.Failure = tc.failure
			computeStatus(s)
			st := k.Status
			if st.Phase != tc.phase || st.ObservedGeneration != 4 {
				t.Errorf("phase %q at generation %d, want %q at 4", st.Phase, st.ObservedGeneration, tc.phase)
			}
			ready := meta.FindStatusCondition(st.Conditions, camelv1.ConditionReady)
			if ready == nil || ready.Status != tc.ready || controller.Reason(ready.Reason) != tc.reason || ready.ObservedGeneration != 4 {
				t.Errorf("Ready %+v, want %s with reason %s", ready, tc.ready, tc.reason)
			}
			if stuck := meta.IsStatusConditionTrue(st.Conditions, camelv1.ConditionStalled); stuck != tc.isStuck {
				t.Errorf("Stalled is %v, want %v", stuck, tc.isStuck)
			}
			if meta.FindStatusCondition(st.Conditions, camelv1.ConditionReconciling) != nil {
				t.Errorf("a Kamelet is never Reconciling: %+v", st.Conditions)
			}
		})
	}
}
