package packaging

import (
	"bytes"
	"log"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/caravan-dev/caravan/internal/install"
)

// renderChart renders ch with values as Helm install does, and returns its files by name, what
// Helm logged (its warnings) and the error.
func renderChart(t *testing.T, ch *chart.Chart, values map[string]any) (map[string]string, string, error) {
	t.Helper()
	var logged bytes.Buffer
	prev := log.Writer()
	log.SetOutput(&logged)
	defer log.SetOutput(prev)
	vals, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{Name: "caravan", Namespace: "ops", IsInstall: true},
		chartutil.DefaultCapabilities)
	if err != nil {
		return nil, logged.String(), err
	}
	out, err := engine.Render(ch, vals)
	return out, logged.String(), err
}

// containerImage is the operator container's image in the rendered files out.
func containerImage(t *testing.T, out map[string]string) string {
	t.Helper()
	return renderedDeployment(t, []string{out["caravan/templates/operator.yaml"]}).Spec.Template.Spec.Containers[0].Image
}

// TestTheChartTakesAnImageTagWithoutAWarning: --set image.tag=X runs the operator at tag X, and
// Helm warns of nothing, nor with a reference.
func TestTheChartTakesAnImageTagWithoutAWarning(t *testing.T) {
	g := NewWithT(t)
	ch, err := LoadChart(sourceRoot())
	g.Expect(err).NotTo(HaveOccurred())
	for _, tc := range []struct {
		image any
		want  string
	}{
		{map[string]any{"tag": "1.2.3"}, "caravan/operator:1.2.3"},
		{map[string]any{"repository": "mirror.example/caravan/operator"}, "mirror.example/caravan/operator:" + ch.Metadata.AppVersion},
		{"reg.example/caravan/operator:1.2.3", "reg.example/caravan/operator:1.2.3"},
	} {
		out, logged, err := renderChart(t, ch, map[string]any{"image": tc.image})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(logged).To(BeEmpty(), "Helm warned with image %v", tc.image)
		g.Expect(containerImage(t, out)).To(Equal(tc.want))
		g.Expect(out["caravan/templates/NOTES.txt"]).NotTo(ContainSubstring("WARNING"))
	}
}

// TestAReleasedChartRunsItsDigestOrAnotherTagWhenTold: a released chart runs its image by digest;
// a tag set alone leaves the digest winning and the notes warn of it; with the digest unset, the
// tag runs from the release's repository.
func TestAReleasedChartRunsItsDigestOrAnotherTagWhenTold(t *testing.T) {
	g := NewWithT(t)
	ch, err := LoadChart(sourceRoot())
	g.Expect(err).NotTo(HaveOccurred())
	released := "reg.example:5000/team/caravan/operator@" + testDigest
	data, err := ReleaseValues(released)
	g.Expect(err).NotTo(HaveOccurred())
	ch.Values, err = chartutil.ReadValues(data)
	g.Expect(err).NotTo(HaveOccurred())

	out, _, err := renderChart(t, ch, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(containerImage(t, out)).To(Equal(released))
	g.Expect(out["caravan/templates/NOTES.txt"]).NotTo(ContainSubstring("WARNING"))

	out, logged, err := renderChart(t, ch, map[string]any{"image": map[string]any{"tag": "v9.9.9"}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(logged).To(BeEmpty())
	g.Expect(containerImage(t, out)).To(Equal(released))
	g.Expect(out["caravan/templates/NOTES.txt"]).To(And(ContainSubstring("WARNING: image.tag v9.9.9 is not used"),
		ContainSubstring(released), ContainSubstring(`set image.digest=""`)))

	out, _, err = renderChart(t, ch, map[string]any{"image": map[string]any{"tag": "v9.9.9", "digest": ""}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(containerImage(t, out)).To(Equal("reg.example:5000/team/caravan/operator:v9.9.9"))
	g.Expect(out["caravan/templates/NOTES.txt"]).NotTo(ContainSubstring("WARNING"))
}

// TestTheChartTakesPullSecretsAsKubernetesListsThem: imagePullSecrets takes [{name: regcred}],
// and names alone as before.
func TestTheChartTakesPullSecretsAsKubernetesListsThem(t *testing.T) {
	g := NewWithT(t)
	objs, _ := render(t, map[string]any{"imagePullSecrets": []any{map[string]any{"name": "regcred"}, "legacy"}}, "ops")
	g.Expect(renderedDeployment(t, objs).Spec.Template.Spec.ImagePullSecrets).To(Equal(
		[]corev1.LocalObjectReference{{Name: "regcred"}, {Name: "legacy"}}))
}

// TestTheChartsSecurityContextsAreRestrictedUnlessChanged: by default the pod and its container
// have caravan install's security contexts (PodSecurity restricted); a field set is merged into
// them, and a field set to null is removed.
func TestTheChartsSecurityContextsAreRestrictedUnlessChanged(t *testing.T) {
	g := NewWithT(t)
	objs, _ := render(t, nil, "ops")
	pod := renderedDeployment(t, objs).Spec.Template.Spec
	g.Expect(pod.SecurityContext).To(Equal(podSecurityContext))
	g.Expect(pod.Containers[0].SecurityContext).To(Equal(install.Restricted()))

	objs, _ = render(t, map[string]any{"podSecurityContext": map[string]any{"fsGroup": 65532, "runAsGroup": nil},
		"securityContext": map[string]any{"readOnlyRootFilesystem": false}}, "ops")
	pod = renderedDeployment(t, objs).Spec.Template.Spec
	g.Expect(pod.SecurityContext.FSGroup).To(Equal(ptr.To[int64](65532)))
	g.Expect(pod.SecurityContext.RunAsGroup).To(BeNil())
	g.Expect(pod.SecurityContext.RunAsNonRoot).To(Equal(ptr.To(true)))
	want := install.Restricted()
	want.ReadOnlyRootFilesystem = ptr.To(false)
	g.Expect(pod.Containers[0].SecurityContext).To(Equal(want))
}

// TestTheChartRendersAPodDisruptionBudgetForReplicas: with more than one replica the chart
// renders a PodDisruptionBudget of the operator's pods, unless told not to; with one, only when
// told to.
func TestTheChartRendersAPodDisruptionBudgetForReplicas(t *testing.T) {
	g := NewWithT(t)
	budgets := func(values map[string]any) []policyv1.PodDisruptionBudget {
		objs, _ := render(t, values, "ops")
		var out []policyv1.PodDisruptionBudget
		for _, o := range objs {
			for _, doc := range strings.Split(o, "\n---") {
				pdb := policyv1.PodDisruptionBudget{}
				if err := yaml.UnmarshalStrict([]byte(doc), &pdb); err == nil && pdb.Kind == "PodDisruptionBudget" {
					out = append(out, pdb)
				}
			}
		}
		return out
	}
	g.Expect(budgets(nil)).To(BeEmpty(), "one replica, by default")
	got := budgets(map[string]any{"operatorId": "tenant-a", "replicas": 2})
	g.Expect(got).To(HaveLen(1))
	g.Expect(got[0].Name).To(Equal("tenant-a-operator"))
	g.Expect(got[0].Namespace).To(Equal("ops"))
	g.Expect(got[0].Spec.MinAvailable).To(Equal(ptr.To(intstr.FromInt32(1))))
	g.Expect(got[0].Spec.Selector.MatchLabels).To(Equal(install.Labels("tenant-a")))
	g.Expect(budgets(map[string]any{"replicas": 2, "podDisruptionBudget": map[string]any{"enabled": false}})).To(BeEmpty())
	got = budgets(map[string]any{"podDisruptionBudget": map[string]any{"enabled": true, "minAvailable": "50%"}})
	g.Expect(got).To(HaveLen(1))
	g.Expect(got[0].Spec.MinAvailable).To(Equal(ptr.To(intstr.FromString("50%"))))
}

// TestTheChartRefusesALimitBelowItsRequest: a limit below its request, the chart's default one
// or the one set, fails with both quantities named; equal quantities written otherwise pass.
func TestTheChartRefusesALimitBelowItsRequest(t *testing.T) {
	g := NewWithT(t)
	ch, err := LoadChart(sourceRoot())
	g.Expect(err).NotTo(HaveOccurred())
	// resources are the values of requests and limits, a nil one left to the chart's defaults.
	resources := func(requests, limits map[string]any) map[string]any {
		r := map[string]any{}
		if requests != nil {
			r["requests"] = requests
		}
		if limits != nil {
			r["limits"] = limits
		}
		return map[string]any{"resources": r}
	}
	for _, tc := range []struct {
		values map[string]any
		want   string
	}{
		{resources(nil, map[string]any{"memory": "32Mi"}), "resources.limits.memory (32Mi) is below resources.requests.memory (64Mi)"},
		{resources(nil, map[string]any{"cpu": "50m"}), "resources.limits.cpu (50m) is below resources.requests.cpu (100m)"},
		{resources(map[string]any{"cpu": 2}, nil), "resources.limits.cpu (1) is below resources.requests.cpu (2)"},
		{resources(map[string]any{"memory": "1Gi"}, map[string]any{"memory": "1e9"}), "resources.limits.memory (1e9)"},
		{resources(map[string]any{"memory": "1G"}, map[string]any{"memory": "999999k"}), "resources.limits.memory (999999k)"},
		{resources(map[string]any{"cpu": "1.5"}, map[string]any{"cpu": "1499m"}), "resources.limits.cpu (1499m)"},
		{resources(map[string]any{"ephemeral-storage": "1Gi"}, map[string]any{"ephemeral-storage": "1Mi"}), "resources.limits.ephemeral-storage"},
		{resources(map[string]any{"memory": "1Gi"}, map[string]any{"memory": "1073741824"}), ""},
		{resources(map[string]any{"cpu": "100m"}, map[string]any{"cpu": 0.1}), ""},
		{resources(map[string]any{"cpu": "0.5"}, map[string]any{"cpu": "5e-1"}), ""},
		{resources(map[string]any{"memory": "1Ki"}, map[string]any{"memory": "1024"}), ""},
		{resources(map[string]any{"memory": "128Mi"}, nil), ""}, // below the default limit, 512Mi
	} {
		_, _, err := renderChart(t, ch, tc.values)
		if tc.want == "" {
			g.Expect(err).NotTo(HaveOccurred(), "%v", tc.values)
			continue
		}
		g.Expect(err).To(MatchError(And(ContainSubstring(tc.want), ContainSubstring("raise the limit or lower the request"))), "%v", tc.values)
	}
}
