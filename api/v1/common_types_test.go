// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package v1

import (
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTraitsReadLikeCamelKYAML(t *testing.T) {
	var spec IntegrationSpec
	in := `{"traits":{"addons":{"custom":{"a":1}},"container":{"image":"quay.io/x/y:1","port":8081}}}`
	if err := json.Unmarshal([]byte(in), &spec); err != nil {
		t.Fatal(err)
	}
	var container struct {
		Image string `json:"image"`
		Port  int    `json:"port"`
	}
	if err := json.Unmarshal(spec.Traits["container"].Raw, &container); err != nil {
		t.Fatal(err)
	}
	if container.Image != "quay.io/x/y:1" || container.Port != 8081 {
		t.Errorf("container trait read as %+v", container)
	}
	out, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("re-encoded as %s, want %s", out, in)
	}
}

func TestSetConditionKeepsTransitionTimeWhenStatusIsUnchanged(t *testing.T) {
	var s IntegrationStatus
	first := metav1.NewTime(metav1.Now().Add(-time.Hour))
	s.SetCondition(metav1.Condition{Type: ConditionReady, Status: metav1.ConditionTrue, Reason: "Running", LastTransitionTime: first})
	changed := s.SetCondition(metav1.Condition{Type: ConditionReady, Status: metav1.ConditionTrue, Reason: "Running"})
	got := s.GetCondition(ConditionReady)
	if changed || got == nil || !got.LastTransitionTime.Equal(&first) {
		t.Errorf("changed=%t condition=%+v", changed, got)
	}
	if s.GetCondition(ConditionStalled) != nil {
		t.Errorf("found a condition that was never set")
	}
}
