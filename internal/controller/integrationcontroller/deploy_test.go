package integrationcontroller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

func TestAClientsPhaseWriteIsReadAsARequestOnlyWhereItDisagreesWithReady(t *testing.T) {
	held := map[string]string{camelv1.DontRunAfterBuildAnnotation: "true"}
	ready := func(status metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: camelv1.ConditionReady, Status: status, Reason: reason}}
	}
	cases := []struct {
		name        string
		annotations map[string]string
		phase       camelv1.IntegrationPhase
		conditions  []metav1.Condition
		want        runRequest
	}{
		{"kamel deploy of a built integration", held, camelv1.IntegrationPhaseDeploying, ready(metav1.ConditionFalse, "BuildComplete"), deployRequest},
		{"the operator's own Deploying", held, camelv1.IntegrationPhaseDeploying, ready(metav1.ConditionFalse, "DeploymentNotReady"), noRequest},
		{"caravan undeploy", held, camelv1.IntegrationPhaseUndeploying, ready(metav1.ConditionTrue, "DeploymentReady"), undeployRequest},
		{"kamel undeploy of a running integration", held, camelv1.IntegrationPhaseInitialization, ready(metav1.ConditionTrue, "DeploymentReady"), undeployRequest},
		{"the operator's own Initialization", held, camelv1.IntegrationPhaseInitialization, ready(metav1.ConditionFalse, "PlatformNotReady"), noRequest},
		{"an integration that runs after its build", nil, camelv1.IntegrationPhaseUndeploying, ready(metav1.ConditionTrue, "DeploymentReady"), noRequest},
		{"an annotation that is not true", map[string]string{camelv1.DontRunAfterBuildAnnotation: "false"}, camelv1.IntegrationPhaseDeploying, ready(metav1.ConditionFalse, "BuildComplete"), noRequest},
	}
	for _, tc := range cases {
		it := &camelv1.Integration{}
		it.Annotations = tc.annotations
		it.Status.Phase, it.Status.Conditions = tc.phase, tc.conditions
		if got := requestOf(it); got != tc.want {
			t.Errorf("%s: request %d, want %d", tc.name, got, tc.want)
		}
	}
}
