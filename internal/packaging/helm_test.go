package packaging

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/monitoring"
)

// sourceRoot is the root of the source tree.
func sourceRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func TestTheGeneratedChartFilesAreUpToDate(t *testing.T) {
	g := NewWithT(t)
	ch, err := LoadChart(sourceRoot())
	g.Expect(err).NotTo(HaveOccurred())
	files, err := Generated(Release{Version: ch.Metadata.AppVersion})
	g.Expect(err).NotTo(HaveOccurred())
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(sourceRoot(), path))
		g.Expect(err).NotTo(HaveOccurred(), "run make generate")
		g.Expect(string(got)).To(Equal(string(want)), "%s is out of date: run make generate", path)
	}
	crds, err := filepath.Glob(filepath.Join(sourceRoot(), ChartDir, "crds", "*.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	for _, f := range crds {
		rel, _ := filepath.Rel(sourceRoot(), f)
		g.Expect(files).To(HaveKey(rel), "%s is no CRD of the project any more: run make generate", rel)
	}
}

// normalized decodes YAML documents into objects keyed by
// kind/namespace/name, without the empty fields that marshalling typed
// objects writes (creationTimestamp: null, status: {}).
func normalized(t *testing.T, docs []string) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, doc := range docs {
		for _, part := range strings.Split(doc, "\n---") {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(part), &obj); err != nil {
				t.Fatalf("decoding %q: %v", part, err)
			}
			if len(obj) == 0 {
				continue
			}
			delete(obj, "status")
			meta, _ := obj["metadata"].(map[string]any)
			if ann, ok := meta["annotations"].(map[string]any); ok {
				delete(ann, keepAnnotation) // Helm's own: the chart's shared objects outlive their release
			}
			if labels, ok := meta["labels"].(map[string]any); ok {
				for _, l := range helmLabels {
					delete(labels, l) // Helm's own (TestEveryObjectOfTheChartCarriesHelmsStandardLabels)
				}
			}
			key := fmt.Sprintf("%v %v/%v", obj["kind"], meta["namespace"], meta["name"])
			if _, dup := out[key]; dup {
				t.Fatalf("%s twice", key)
			}
			out[key] = prune(obj)
		}
	}
	return out
}

// prune removes nil values and empty maps and lists, recursively.
func prune(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			x = prune(x)
			if empty(x) {
				delete(v, k)
				continue
			}
			v[k] = x
		}
		return v
	case []any:
		for i := range v {
			v[i] = prune(v[i])
		}
		return v
	}
	return v
}

func empty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}

// manifests are install's objects for c, CRDs apart, as YAML documents.
func manifests(t *testing.T, c install.Config) (objs, crds []string) {
	t.Helper()
	all, err := install.Manifests(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range all {
		data, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if o.GetObjectKind().GroupVersionKind().Kind == "CustomResourceDefinition" {
			crds = append(crds, string(data))
			continue
		}
		objs = append(objs, string(data))
	}
	return objs, crds
}

// render renders the chart with values, as release namespace ns, for a cluster that serves
// MutatingAdmissionPolicy v1.
func render(t *testing.T, values map[string]any, ns string) (objs, crds []string) {
	t.Helper()
	caps := *chartutil.DefaultCapabilities
	caps.KubeVersion = chartutil.KubeVersion{Version: "v1.37.2", Major: "1", Minor: "37"}
	caps.APIVersions = append(slices.Clone(caps.APIVersions), "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy")
	return renderFor(t, values, ns, &caps)
}

// renderFor renders the chart with values, as release namespace ns, for a cluster of caps.
func renderFor(t *testing.T, values map[string]any, ns string, caps *chartutil.Capabilities) (objs, crds []string) {
	t.Helper()
	ch, err := LoadChart(sourceRoot())
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{Name: "caravan", Namespace: ns, IsInstall: true}, caps)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.Render(ch, vals)
	if err != nil {
		t.Fatalf("rendering the chart: %v", err)
	}
	names := make([]string, 0, len(out))
	for name := range out {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if strings.HasSuffix(name, ".yaml") {
			objs = append(objs, out[name])
		}
	}
	for _, f := range ch.CRDObjects() {
		crds = append(crds, string(f.File.Data))
	}
	return objs, crds
}

// mustResources are the container's resources as `caravan install
// --requests --limits` makes them: the defaults, with the given names
// replaced (as Helm merges values into the chart's defaults).
func mustResources(requests, limits map[string]string) corev1.ResourceRequirements {
	r, err := install.ParseResources(requests, limits)
	if err != nil {
		panic(err)
	}
	return r
}

// testDigest is a digest of an image reference.
var testDigest = "sha256:" + strings.Repeat("0f", 32)

// settings are the same installation, as install's Config and as the
// chart's values.
var settings = []struct {
	name   string
	config install.Config
	values map[string]any
}{
	{
		name:   "the default operator, every default",
		config: install.Config{ID: "camel-k", Default: true},
		values: map[string]any{},
	},
	{
		name: "a limited tenant operator with every setting",
		config: install.Config{ID: "tenant-a", WatchNamespaces: []string{"team-b", "team-a"}, Image: "registry.invalid/caravan@" + testDigest,
			Registry: "kits.invalid:5000", RegistryInsecure: true, RegistrySecret: "kits-push", SkipAdmission: true, SkipKamelets: true, Replicas: ptr.To[int32](2),
			Resources:    mustResources(map[string]string{"cpu": "50m", "memory": "32Mi"}, map[string]string{"memory": "256Mi"}),
			NodeSelector: map[string]string{"pool": "operators"},
			Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "operators",
				Effect: corev1.TaintEffectNoSchedule}},
			ImagePullSecrets: []string{"pull"}, HeartbeatInterval: 5 * time.Second, Verbosity: 2, LogJSON: true, Pprof: true},
		values: map[string]any{"operatorId": "tenant-a", "watchNamespaces": []any{"team-b", "team-a"},
			"image": "registry.invalid/caravan@" + testDigest, "registry": map[string]any{"address": "kits.invalid:5000", "insecure": true, "secret": "kits-push"},
			"skipAdmission": true, "skipKamelets": true, "replicas": 2,
			"resources": map[string]any{"requests": map[string]any{"cpu": "50m", "memory": "32Mi"},
				"limits": map[string]any{"memory": "256Mi"}},
			"nodeSelector":     map[string]any{"pool": "operators"},
			"tolerations":      []any{map[string]any{"key": "dedicated", "operator": "Equal", "value": "operators", "effect": "NoSchedule"}},
			"imagePullSecrets": []any{"pull"}, "heartbeatInterval": "5s", "logVerbosity": 2, "logFormat": "json", "pprof": true},
	},
	{
		name:   "a second release: a default operator named otherwise, limited to its own namespace and another, without the shared objects",
		config: install.Config{ID: "tenant-b", Default: true, WatchNamespaces: []string{"ops", "apps"}},
		values: map[string]any{"operatorId": "tenant-b", "default": true, "watchNamespaces": []any{"ops", "apps"}, "sharedResources": false},
	},
}

// expectSameObjects fails the test unless got, rendered by what, holds
// exactly the objects of want, install's, each equal to install's.
func expectSameObjects(t *testing.T, want, got map[string]any, what string) {
	t.Helper()
	g := NewWithT(t)
	for key := range want {
		g.Expect(got).To(HaveKey(key), "%s lacks %s", what, key)
	}
	for key := range got {
		g.Expect(want).To(HaveKey(key), "%s has %s, which install does not apply", what, key)
	}
	for key, w := range want {
		if d := cmp.Diff(w, got[key]); d != "" {
			t.Errorf("%s differs from install's (-install +%s):\n%s", key, what, d)
		}
	}
}

// shared tells whether the object of key (kind namespace/name) is one
// that every operator of a cluster shares, which only the first release
// renders.
func shared(key string) bool {
	for _, name := range append(slices.Clone(install.SharedRoles), install.AssignmentPolicy, install.NamespacesPolicy, install.ConfinementPolicy, install.ForeignConfinementPolicy, install.OrphanMarkPolicy, install.LabelPolicy, install.DefaultPolicy) {
		if strings.HasSuffix(key, "/"+name) {
			return true
		}
	}
	return false
}

// helmLabels are Helm's standard labels, which the chart adds to what install applies.
var helmLabels = []string{"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/version"}

func TestEveryObjectOfTheChartCarriesHelmsStandardLabels(t *testing.T) {
	ch, err := LoadChart(sourceRoot())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"helm.sh/chart": "caravan-" + ch.Metadata.Version, "app.kubernetes.io/managed-by": "Helm",
		"app.kubernetes.io/version": ch.Metadata.AppVersion}
	for _, values := range []map[string]any{
		{"monitoring": map[string]any{"enabled": true}, "watchNamespaces": []any{"team-a"}},
		{"fleet": map[string]any{"enabled": true}},
	} {
		objs, _ := render(t, values, "ops")
		seen := 0
		for _, doc := range objs {
			for _, part := range strings.Split(doc, "\n---") {
				var obj map[string]any
				if err := yaml.Unmarshal([]byte(part), &obj); err != nil {
					t.Fatal(err)
				}
				if len(obj) == 0 || obj["kind"] == "IntegrationPlatform" {
					continue // the platform is the users' to edit: rendered once, never over their changes
				}
				seen++
				meta, _ := obj["metadata"].(map[string]any)
				labels, _ := meta["labels"].(map[string]any)
				for k, v := range want {
					if labels[k] != v {
						t.Errorf("%v %v: label %s = %v, want %v", obj["kind"], meta["name"], k, labels[k], v)
					}
				}
			}
		}
		if seen == 0 {
			t.Errorf("rendered %d objects with %v, want some", seen, values)
		}
	}
}

func TestTheChartRendersWhatInstallApplies(t *testing.T) {
	ch, err := LoadChart(sourceRoot())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range settings {
		t.Run(s.name, func(t *testing.T) {
			g := NewWithT(t)
			c := s.config
			c.Namespace, c.Version = "ops", ch.Metadata.AppVersion
			if c.Image == "" {
				c.Image = "caravan/operator:" + ch.Metadata.AppVersion
			}
			wantObjs, wantCRDs := manifests(t, c)
			gotObjs, gotCRDs := render(t, s.values, "ops")
			want, got := normalized(t, wantObjs), normalized(t, gotObjs)
			for key := range got {
				if strings.HasPrefix(key, "PodDisruptionBudget ") {
					delete(got, key) // the chart's own (TestTheChartRendersAPodDisruptionBudgetForReplicas)
				}
			}
			if s.values["sharedResources"] == false {
				for key := range want {
					if shared(key) {
						delete(want, key)
					}
				}
			}
			expectSameObjects(t, want, got, "the chart")
			g.Expect(normalized(t, gotCRDs)).To(Equal(normalized(t, wantCRDs)))
		})
	}
}

func TestTheChartInstallsTheValidatingPoliciesAloneWhereNoMutatingPolicyIsServed(t *testing.T) {
	ch, err := LoadChart(sourceRoot())
	if err != nil {
		t.Fatal(err)
	}
	c := install.Config{ID: "camel-k", Default: true, Namespace: "ops", Version: ch.Metadata.AppVersion,
		Image: "caravan/operator:" + ch.Metadata.AppVersion, ValidatingOnly: true}
	wantObjs, _ := manifests(t, c)
	caps := *chartutil.DefaultCapabilities
	caps.KubeVersion = chartutil.KubeVersion{Version: "v1.34.1", Major: "1", Minor: "34"}
	gotObjs, _ := renderFor(t, nil, "ops", &caps)
	expectSameObjects(t, normalized(t, wantObjs), normalized(t, gotObjs), "the chart on Kubernetes 1.34")
}

func TestTheChartRefusesAnInvalidOperatorID(t *testing.T) {
	g := NewWithT(t)
	ch, err := LoadChart(sourceRoot())
	g.Expect(err).NotTo(HaveOccurred())
	vals, err := chartutil.ToRenderValues(ch, map[string]any{"operatorId": "Tenant_A"},
		chartutil.ReleaseOptions{Name: "caravan", Namespace: "ops", IsInstall: true}, chartutil.DefaultCapabilities)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = engine.Render(ch, vals)
	g.Expect(err).To(MatchError(ContainSubstring(`operatorId "Tenant_A" must be a DNS-1123 label`)))
}

func TestTheChartPassesHelmLint(t *testing.T) {
	g := NewWithT(t)
	kube := &chartutil.KubeVersion{Version: "v1.36.0", Major: "1", Minor: "36"}
	for _, s := range settings {
		result := lint.AllWithKubeVersion(filepath.Join(sourceRoot(), ChartDir), s.values, "ops", kube)
		for _, m := range result.Messages {
			g.Expect(m.Severity).To(BeNumerically("<", support.WarningSev), "%s: helm lint: %s", s.name, m)
		}
	}
}

// TestTheChartRendersTheMonitoringObjectsWhenAsked: with monitoring.enabled the release
// that holds the shared objects renders the PodMonitor, the scraper's identity, the
// PrometheusRule and the dashboard's ConfigMap, as monitoring.Objects makes them, and no
// other release does.
func TestTheChartRendersTheMonitoringObjectsWhenAsked(t *testing.T) {
	g := NewWithT(t)
	want, err := monitoring.Objects("ops")
	g.Expect(err).NotTo(HaveOccurred())
	var docs []string
	for _, o := range want {
		data, err := document(o)
		g.Expect(err).NotTo(HaveOccurred())
		docs = append(docs, string(data))
	}
	monitoringOf := func(values map[string]any) map[string]any {
		objs, _ := render(t, values, "ops")
		got := map[string]any{}
		for key, obj := range normalized(t, objs) {
			if strings.HasPrefix(key, "PodMonitor ") || strings.HasPrefix(key, "PrometheusRule ") ||
				strings.Contains(key, monitoring.DashboardConfigMap) || strings.Contains(key, monitoring.ScraperName) {
				got[key] = obj
			}
		}
		return got
	}
	g.Expect(monitoringOf(map[string]any{})).To(BeEmpty(), "monitoring is off by default")
	labelled := monitoringOf(map[string]any{"monitoring": map[string]any{"enabled": true, "labels": map[string]any{"release": "kps"}}})
	for key, obj := range labelled {
		labels, _ := obj.(map[string]any)["metadata"].(map[string]any)["labels"].(map[string]any)
		if strings.HasPrefix(key, "PodMonitor ") || strings.HasPrefix(key, "PrometheusRule ") {
			g.Expect(labels).To(HaveKeyWithValue("release", "kps"), "%s lacks monitoring.labels", key)
		} else {
			g.Expect(labels).NotTo(HaveKey("release"), "%s has monitoring.labels", key)
		}
	}
	g.Expect(monitoringOf(map[string]any{"monitoring": map[string]any{"enabled": true}})).To(Equal(normalized(t, docs)))
	g.Expect(monitoringOf(map[string]any{"monitoring": map[string]any{"enabled": true}, "sharedResources": false})).To(BeEmpty(),
		"a second release would own the same objects")
	kube := &chartutil.KubeVersion{Version: "v1.36.0", Major: "1", Minor: "36"}
	result := lint.AllWithKubeVersion(filepath.Join(sourceRoot(), ChartDir), map[string]any{"monitoring": map[string]any{"enabled": true}}, "ops", kube)
	for _, m := range result.Messages {
		g.Expect(m.Severity).To(BeNumerically("<", support.WarningSev), "helm lint: %s", m)
	}
}

// TestTheChartRendersTheFleetControllerWhenAsked: with fleet.enabled the chart renders
// what caravan install --fleet applies (its identity, rights and Deployment, and the
// CRDs), and no operator.
func TestTheChartRendersTheFleetControllerWhenAsked(t *testing.T) {
	g := NewWithT(t)
	img := "REGISTRY/caravan/operator@sha256:0000000000000000000000000000000000000000000000000000000000000000"
	objs, err := install.FleetManifests(install.FleetConfig{Namespace: "ops", Image: img, Registry: "registry.test:5000", RegistryInsecure: true})
	g.Expect(err).NotTo(HaveOccurred())
	var wantObjs, wantCRDs []string
	for _, o := range objs {
		data, err := yaml.Marshal(o)
		g.Expect(err).NotTo(HaveOccurred())
		if o.GetObjectKind().GroupVersionKind().Kind == "CustomResourceDefinition" {
			wantCRDs = append(wantCRDs, string(data))
		} else {
			wantObjs = append(wantObjs, string(data))
		}
	}
	gotObjs, gotCRDs := render(t, map[string]any{"fleet": map[string]any{"enabled": true}, "image": img,
		"registry": map[string]any{"address": "registry.test:5000", "insecure": true}}, "ops")
	expectSameObjects(t, normalized(t, wantObjs), normalized(t, gotObjs), "the chart's fleet controller")
	g.Expect(normalized(t, gotCRDs)).To(Equal(normalized(t, wantCRDs)))
}

// TestTheChartRefusesValuesItsSchemaDoesNotDescribe: a misspelt key, at the top or in an
// object, and a value of the wrong type fail as Helm renders the chart, and so does helm lint.
func TestTheChartRefusesValuesItsSchemaDoesNotDescribe(t *testing.T) {
	g := NewWithT(t)
	ch, err := LoadChart(sourceRoot())
	g.Expect(err).NotTo(HaveOccurred())
	for _, tc := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"operatorID": "tenant-a"}, "operatorID"},
		{map[string]any{"registry": map[string]any{"adress": "registry:5000"}}, "adress"},
		{map[string]any{"replicas": "two"}, "replicas"},
		{map[string]any{"logFormat": "xml"}, "logFormat"},
		{map[string]any{"image": "not an image"}, "at '/image': 'not an image' does not match pattern"},
		{map[string]any{"image": map[string]any{"repository": "Registry/Caravan"}}, "/image/repository"},
		{map[string]any{"image": map[string]any{"tag": "bad tag"}}, "/image/tag"},
		{map[string]any{"image": map[string]any{"digest": "sha256:0"}}, "/image/digest"},
		{map[string]any{"watchNamespaces": []any{"BAD_NS"}}, "at '/watchNamespaces/0': 'BAD_NS' does not match pattern"},
		{map[string]any{"watchNamespaces": []any{strings.Repeat("a", 64)}}, "/watchNamespaces/0"},
		{map[string]any{"imagePullSecrets": []any{map[string]any{"nam": "regcred"}}}, "/imagePullSecrets/0"},
		{map[string]any{"resources": map[string]any{"limits": map[string]any{"memory": "lots"}}}, "/resources/limits/memory"},
		{map[string]any{"resources": map[string]any{"limtis": map[string]any{"memory": "1Gi"}}}, "limtis"},
		{map[string]any{"podDisruptionBudget": map[string]any{"minAvailable": "half"}}, "/podDisruptionBudget/minAvailable"},
	} {
		_, err := chartutil.ToRenderValues(ch, tc.values,
			chartutil.ReleaseOptions{Name: "caravan", Namespace: "ops", IsInstall: true}, chartutil.DefaultCapabilities)
		g.Expect(err).To(MatchError(ContainSubstring(tc.want)), "values %v", tc.values)
		kube := &chartutil.KubeVersion{Version: "v1.36.0", Major: "1", Minor: "36"}
		result := lint.AllWithKubeVersion(filepath.Join(sourceRoot(), ChartDir), tc.values, "ops", kube)
		g.Expect(result.Messages).To(ContainElement(HaveField("Severity", support.ErrorSev)), "helm lint of %v", tc.values)
	}
	_, err = chartutil.ToRenderValues(ch, map[string]any{"operatorId": "tenant-a", "registry": map[string]any{"address": "registry:5000"},
		"resources": map[string]any{"limits": map[string]any{"cpu": "2"}}},
		chartutil.ReleaseOptions{Name: "caravan", Namespace: "ops", IsInstall: true}, chartutil.DefaultCapabilities)
	g.Expect(err).NotTo(HaveOccurred(), "values the schema describes")
}

// TestTheChartsNotesSayWhatToDoNext: after an install, the notes name the operator, how to see
// it register, how to grant a team its use and run a route; the fleet's say how to declare one.
func TestTheChartsNotesSayWhatToDoNext(t *testing.T) {
	g := NewWithT(t)
	ch, err := LoadChart(sourceRoot())
	g.Expect(err).NotTo(HaveOccurred())
	notes := func(values map[string]any) string {
		vals, err := chartutil.ToRenderValues(ch, values,
			chartutil.ReleaseOptions{Name: "caravan", Namespace: "ops", IsInstall: true}, chartutil.DefaultCapabilities)
		g.Expect(err).NotTo(HaveOccurred())
		out, err := engine.Render(ch, vals)
		g.Expect(err).NotTo(HaveOccurred())
		return out["caravan/templates/NOTES.txt"]
	}
	g.Expect(notes(map[string]any{"operatorId": "tenant-a"})).To(And(
		ContainSubstring("Caravan operator tenant-a runs in namespace ops"),
		ContainSubstring("kubectl get integrationoperator tenant-a"),
		ContainSubstring("caravan grant -x tenant-a --to group:team-a -n team-a"),
		ContainSubstring("caravan run route.yaml -x tenant-a")))
	g.Expect(notes(map[string]any{"operatorId": "tenant-b", "sharedResources": false})).To(ContainSubstring("sharedResources=false"))
	g.Expect(notes(map[string]any{"fleet": map[string]any{"enabled": true}})).To(And(
		ContainSubstring("fleet controller runs in namespace ops"), ContainSubstring("kind: IntegrationOperator")))
}

// TestTheChartsPodKnobsReachTheOperatorsPod: the knobs real clusters need land in the
// Deployment's pod, and a pod label cannot replace the chart's selector labels.
func TestTheChartsPodKnobsReachTheOperatorsPod(t *testing.T) {
	g := NewWithT(t)
	objs, _ := render(t, map[string]any{"operatorId": "tenant-a",
		"podAnnotations":    map[string]any{"example.com/team": "a"},
		"podLabels":         map[string]any{"team": "a", "app.kubernetes.io/instance": "hijack"},
		"priorityClassName": "operators",
		"affinity": map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
			"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": "pool", "operator": "In", "values": []any{"ops"}}}}}}}},
		"topologySpreadConstraints": []any{map[string]any{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}},
		"extraEnv":                  []any{map[string]any{"name": "HTTPS_PROXY", "value": "http://proxy:3128"}},
		"extraArgs":                 []any{"--verbosity=2"},
	}, "ops")
	pod := renderedDeployment(t, objs).Spec.Template
	g.Expect(pod.Annotations).To(HaveKeyWithValue("example.com/team", "a"))
	g.Expect(pod.Labels).To(And(HaveKeyWithValue("team", "a"), HaveKeyWithValue("app.kubernetes.io/instance", "tenant-a")))
	g.Expect(pod.Spec.PriorityClassName).To(Equal("operators"))
	g.Expect(pod.Spec.Affinity.NodeAffinity).NotTo(BeNil())
	g.Expect(pod.Spec.TopologySpreadConstraints).To(HaveLen(1))
	c := pod.Spec.Containers[0]
	g.Expect(c.Env).To(ContainElement(HaveField("Name", "HTTPS_PROXY")))
	g.Expect(c.Args[len(c.Args)-1]).To(Equal("--verbosity=2"))
}

// TestTheChartTakesTheImageAsAReferenceOrAnObject: image is a reference, or an object whose
// digest wins over its tag, with a pull policy.
func TestTheChartTakesTheImageAsAReferenceOrAnObject(t *testing.T) {
	g := NewWithT(t)
	digest := "sha256:" + strings.Repeat("ab", 32)
	container := func(image any) corev1.Container {
		objs, _ := render(t, map[string]any{"operatorId": "tenant-a", "image": image}, "ops")
		return renderedDeployment(t, objs).Spec.Template.Spec.Containers[0]
	}
	c := container("reg.example/caravan/operator@" + digest)
	g.Expect(c.Image).To(Equal("reg.example/caravan/operator@" + digest))
	g.Expect(c.ImagePullPolicy).To(Equal(corev1.PullIfNotPresent))
	c = container(map[string]any{"repository": "reg.example/caravan/operator", "tag": "1.2.3", "digest": digest, "pullPolicy": "Always"})
	g.Expect(c.Image).To(Equal("reg.example/caravan/operator@" + digest))
	g.Expect(c.ImagePullPolicy).To(Equal(corev1.PullAlways))
	c = container(map[string]any{"repository": "reg.example/caravan/operator", "tag": "1.2.3"})
	g.Expect(c.Image).To(Equal("reg.example/caravan/operator:1.2.3"))
}

// renderedDeployment is the Deployment among the documents render returned.
func renderedDeployment(t *testing.T, objs []string) *appsv1.Deployment {
	t.Helper()
	for _, o := range objs {
		for _, doc := range strings.Split(o, "\n---") {
			d := &appsv1.Deployment{}
			if err := yaml.Unmarshal([]byte(doc), d); err == nil && d.Kind == "Deployment" {
				return d
			}
		}
	}
	t.Fatal("no Deployment rendered")
	return nil
}

// TestTheChartsServiceAccountTakesAnnotationsOrIsMadeBeforehand: the operator's ServiceAccount
// carries the annotations a workload identity needs, or is left to whoever made it; either way
// the pod runs as <id>-operator, the name the admission policies read.
func TestTheChartsServiceAccountTakesAnnotationsOrIsMadeBeforehand(t *testing.T) {
	g := NewWithT(t)
	serviceAccounts := func(objs []string) []corev1.ServiceAccount {
		var out []corev1.ServiceAccount
		for _, o := range objs {
			for _, doc := range strings.Split(o, "\n---") {
				sa := corev1.ServiceAccount{}
				if err := yaml.Unmarshal([]byte(doc), &sa); err == nil && sa.Kind == "ServiceAccount" && sa.Name == "tenant-a-operator" {
					out = append(out, sa)
				}
			}
		}
		return out
	}
	objs, _ := render(t, map[string]any{"operatorId": "tenant-a",
		"serviceAccount": map[string]any{"annotations": map[string]any{"iam.example.com/role": "kit-pusher"}}}, "ops")
	g.Expect(serviceAccounts(objs)).To(ConsistOf(HaveField("Annotations", HaveKeyWithValue("iam.example.com/role", "kit-pusher"))))
	g.Expect(renderedDeployment(t, objs).Spec.Template.Spec.ServiceAccountName).To(Equal("tenant-a-operator"))

	objs, _ = render(t, map[string]any{"operatorId": "tenant-a", "serviceAccount": map[string]any{"create": false}}, "ops")
	g.Expect(serviceAccounts(objs)).To(BeEmpty(), "the chart made a ServiceAccount it was told exists")
	g.Expect(renderedDeployment(t, objs).Spec.Template.Spec.ServiceAccountName).To(Equal("tenant-a-operator"))
}
