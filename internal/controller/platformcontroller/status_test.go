package platformcontroller

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

func TestComputeStatus(t *testing.T) {
	resolved := camelv1.IntegrationPlatformSpec{Cluster: "Kubernetes", Profile: "Kubernetes"}
	cases := []struct {
		name     string
		settings *camelv1.IntegrationPlatformSpec
		phase    camelv1.IntegrationPlatformPhase
		version  string
		cluster  string
	}{
		{name: "a platform whose settings are resolved is Ready with them and the operator's version",
			settings: &resolved, phase: camelv1.IntegrationPlatformPhaseReady, version: "1.2.0", cluster: "Kubernetes"},
		{name: "a reconcile that resolved nothing leaves the status as it was", phase: camelv1.IntegrationPlatformPhaseNone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			itp := &camelv1.IntegrationPlatform{ObjectMeta: metav1.ObjectMeta{Name: "tenant-a", Generation: 2}}
			computeStatus(&scope{itp: itp, operatorID: "tenant-a", version: "1.2.0", settings: tc.settings})
			st := itp.Status
			if st.Phase != tc.phase || st.Version != tc.version || st.Cluster != tc.cluster {
				t.Errorf("phase %q, version %q, cluster %q; want %q, %q, %q", st.Phase, st.Version, st.Cluster, tc.phase, tc.version, tc.cluster)
			}
			ready := meta.FindStatusCondition(st.Conditions, camelv1.ConditionReady)
			if tc.settings == nil {
				if ready != nil {
					t.Errorf("Ready set with nothing resolved: %+v", ready)
				}
				return
			}
			if ready == nil || ready.Status != metav1.ConditionTrue || ready.Reason != string(ReasonResolved) ||
				ready.Message != "platform of operator tenant-a" || ready.ObservedGeneration != 2 || st.ObservedGeneration != 2 {
				t.Errorf("Ready %+v, observed generation %d", ready, st.ObservedGeneration)
			}
			if len(st.Conditions) != 1 {
				t.Errorf("a Ready platform is neither Reconciling nor Stalled: %+v", st.Conditions)
			}
		})
	}
}

// TestAPlatformNoBuildCanRunWithSaysWhy: Camel K's routine strategy, which Caravan's operator
// cannot run, makes the platform Error, Stalled, with a Ready message naming pod.
func TestAPlatformNoBuildCanRunWithSaysWhy(t *testing.T) {
	settings := camelv1.IntegrationPlatformSpec{}
	settings.Build.BuildConfiguration = &camelv1.RawObject{}
	settings.Build.BuildConfiguration.Raw = []byte(`{"strategy":"routine"}`)
	itp := &camelv1.IntegrationPlatform{ObjectMeta: metav1.ObjectMeta{Name: "tenant-a", Generation: 3}}
	computeStatus(&scope{itp: itp, operatorID: "tenant-a", settings: &settings})
	ready := meta.FindStatusCondition(itp.Status.Conditions, camelv1.ConditionReady)
	if itp.Status.Phase != camelv1.IntegrationPlatformPhaseError || ready == nil || ready.Status != metav1.ConditionFalse ||
		ready.Reason != string(ReasonInvalidBuildConfiguration) || !strings.Contains(ready.Message, `"routine"`) ||
		!strings.Contains(ready.Message, "use pod") {
		t.Fatalf("phase %q, Ready %+v", itp.Status.Phase, ready)
	}
	if !meta.IsStatusConditionTrue(itp.Status.Conditions, camelv1.ConditionStalled) {
		t.Errorf("a platform no build can run with is not Stalled: %+v", itp.Status.Conditions)
	}
}

// TestKameletRepositoriesAreSaidNotToBeRead: as Camel K says they are deprecated, a platform that
// names Kamelet repositories is told Caravan does not read them, and the condition goes with them.
func TestKameletRepositoriesAreSaidNotToBeRead(t *testing.T) {
	resolved := camelv1.IntegrationPlatformSpec{}
	itp := &camelv1.IntegrationPlatform{ObjectMeta: metav1.ObjectMeta{Name: "tenant-a", Generation: 2}}
	itp.Spec.Kamelet.Repositories = []camelv1.KameletRepositorySpec{{URI: "github:apache/camel-kamelets/kamelets"}}
	computeStatus(&scope{itp: itp, operatorID: "tenant-a", settings: &resolved})
	c := meta.FindStatusCondition(itp.Status.Conditions, ConditionKameletRepositories)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != string(ReasonKameletRepositoriesNotRead) ||
		!strings.Contains(c.Message, "spec.kamelet.repositories (1) are not read") {
		t.Fatalf("condition %+v", c)
	}
	itp.Spec.Kamelet.Repositories = nil
	computeStatus(&scope{itp: itp, operatorID: "tenant-a", settings: &resolved})
	if c := meta.FindStatusCondition(itp.Status.Conditions, ConditionKameletRepositories); c != nil {
		t.Errorf("the condition stays without repositories: %+v", c)
	}
}
