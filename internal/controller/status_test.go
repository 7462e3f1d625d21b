package controller

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

func TestProgressSetsReadyAndReconcilingOrStalled(t *testing.T) {
	var conditions []metav1.Condition
	SetProgress(&conditions, 3, metav1.ConditionFalse, ProgressOf("Building", "Ready", "Error"), "Building", "building")
	if !meta.IsStatusConditionTrue(conditions, camelv1.ConditionReconciling) || meta.FindStatusCondition(conditions, camelv1.ConditionStalled) != nil {
		t.Fatalf("in progress: %v", conditions)
	}
	SetProgress(&conditions, 3, metav1.ConditionFalse, ProgressOf("Error", "Ready", "Error"), "Failed", "failed")
	if !meta.IsStatusConditionTrue(conditions, camelv1.ConditionStalled) || meta.FindStatusCondition(conditions, camelv1.ConditionReconciling) != nil {
		t.Fatalf("stuck: %v", conditions)
	}
	SetProgress(&conditions, 4, metav1.ConditionTrue, ProgressOf("Ready", "Ready", "Error"), "Built", "built")
	ready := meta.FindStatusCondition(conditions, camelv1.ConditionReady)
	if len(conditions) != 1 || ready == nil || ready.Status != metav1.ConditionTrue || ready.ObservedGeneration != 4 || ready.Reason != "Built" {
		t.Fatalf("current: %v", conditions)
	}
}

func TestProgressOfAnotherSummaryLeavesReadyToItsWriter(t *testing.T) {
	conditions := []metav1.Condition{{Type: camelv1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Registered"}}
	SetProgressOf(&conditions, "Deployed", 2, metav1.ConditionFalse, InProgress, "RollingOut", "rolling")
	deployed := meta.FindStatusCondition(conditions, "Deployed")
	if deployed == nil || deployed.Status != metav1.ConditionFalse || deployed.ObservedGeneration != 2 ||
		!meta.IsStatusConditionTrue(conditions, camelv1.ConditionReconciling) {
		t.Fatalf("rolling out: %v", conditions)
	}
	SetProgressOf(&conditions, "Deployed", 2, metav1.ConditionTrue, Current, "RolledOut", "done")
	if ready := meta.FindStatusCondition(conditions, camelv1.ConditionReady); ready == nil || ready.Reason != "Registered" ||
		meta.FindStatusCondition(conditions, camelv1.ConditionReconciling) != nil || !meta.IsStatusConditionTrue(conditions, "Deployed") {
		t.Fatalf("rolled out: %v", conditions)
	}
}
