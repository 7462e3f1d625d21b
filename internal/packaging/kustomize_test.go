package packaging

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/monitoring"
)

// build renders the kustomization in dir (relative to KustomizeDir) with
// kustomize's library.
func build(t *testing.T, dir string) []string {
	t.Helper()
	return buildIn(t, filesys.MakeFsOnDisk(), filepath.Join(sourceRoot(), KustomizeDir, dir))
}

// buildIn renders the kustomization in dir of fs with kustomize's library.
func buildIn(t *testing.T, fs filesys.FileSystem, dir string) []string {
	t.Helper()
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	data, err := res.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return []string{string(data)}
}

// installedObjects are the objects caravan install applies for c, its namespace and the CRDs
// included, as normalized keys them.
func installedObjects(t *testing.T, c install.Config) map[string]any {
	t.Helper()
	objs, crds := manifests(t, c)
	ns, err := yaml.Marshal(install.Namespace(c.Namespace))
	if err != nil {
		t.Fatal(err)
	}
	return normalized(t, append(append(objs, crds...), string(ns)))
}

func TestTheKustomizationsBuildWhatInstallApplies(t *testing.T) {
	ch, err := LoadChart(sourceRoot())
	if err != nil {
		t.Fatal(err)
	}
	version := ch.Metadata.AppVersion
	pinned := Base(Release{Version: version})
	pinned.Image = "REGISTRY/caravan/operator@sha256:0000000000000000000000000000000000000000000000000000000000000000"
	pinned.Replicas, pinned.Registry = ptr.To[int32](2), "REGISTRY"
	bare := Base(Release{Version: version})
	bare.SkipAdmission = true
	older := Base(Release{Version: version})
	older.ValidatingOnly = true
	own := Base(Release{Version: version})
	own.WatchNamespaces = []string{own.Namespace}
	for _, tc := range []struct {
		dir    string
		config install.Config
	}{
		{"base", Base(Release{Version: version})},
		{"overlays/pinned", pinned},
		{"overlays/without-admission", bare},
		{"overlays/before-1.36", older},
		{"overlays/own-namespace", own},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			want := installedObjects(t, tc.config)
			got := normalized(t, build(t, tc.dir))
			expectSameObjects(t, want, got, "the kustomization")
		})
	}
}

// TestTheMonitoringBaseBuildsTheMonitoringObjects: kustomize build deploy/monitoring gives
// the objects of monitoring.Objects in the kustomize base's namespace.
func TestTheMonitoringBaseBuildsTheMonitoringObjects(t *testing.T) {
	g := NewWithT(t)
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(sourceRoot(), MonitoringDir))
	g.Expect(err).NotTo(HaveOccurred())
	data, err := res.AsYaml()
	g.Expect(err).NotTo(HaveOccurred())
	want, err := monitoring.Objects(Base(Release{}).Namespace)
	g.Expect(err).NotTo(HaveOccurred())
	var docs []string
	for _, o := range want {
		doc, err := document(o)
		g.Expect(err).NotTo(HaveOccurred())
		docs = append(docs, string(doc))
	}
	g.Expect(normalized(t, []string{string(data)})).To(Equal(normalized(t, docs)))
}

// TestTheFleetKustomizationBuildsWhatInstallFleetApplies: kustomize build
// deploy/kustomize/fleet gives the objects of caravan install --fleet, with the CRDs and
// its namespace.
func TestTheFleetKustomizationBuildsWhatInstallFleetApplies(t *testing.T) {
	g := NewWithT(t)
	ch, err := LoadChart(sourceRoot())
	g.Expect(err).NotTo(HaveOccurred())
	cfg := Fleet(Release{Version: ch.Metadata.AppVersion})
	objs, err := install.FleetManifests(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	var want []string
	for _, o := range append(objs, install.Namespace(cfg.Namespace)) {
		data, err := yaml.Marshal(o)
		g.Expect(err).NotTo(HaveOccurred())
		want = append(want, string(data))
	}
	expectSameObjects(t, normalized(t, want), normalized(t, build(t, "fleet")), "the fleet kustomization")
}

// TestThePrometheusReleaseComponentLabelsWhatPrometheusSelects: deploy/monitoring with the
// component labels the PodMonitor and the PrometheusRule release: kube-prometheus-stack, and
// nothing else.
func TestThePrometheusReleaseComponentLabelsWhatPrometheusSelects(t *testing.T) {
	g := NewWithT(t)
	// The base and the component, copied beside an overlay of both, as a user's repository holds them.
	fs := filesys.MakeFsInMemory()
	for dir, copyTo := range map[string]string{MonitoringDir: "/repo/monitoring", PrometheusReleaseComponent: "/repo/component"} {
		files, err := os.ReadDir(filepath.Join(sourceRoot(), dir))
		g.Expect(err).NotTo(HaveOccurred())
		for _, f := range files {
			data, err := os.ReadFile(filepath.Join(sourceRoot(), dir, f.Name()))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(fs.WriteFile(filepath.Join(copyTo, f.Name()), data)).To(Succeed())
		}
	}
	g.Expect(fs.WriteFile("/repo/overlay/kustomization.yaml", []byte("apiVersion: kustomize.config.k8s.io/v1beta1\n"+
		"kind: Kustomization\nresources:\n  - ../monitoring\ncomponents:\n  - ../component\n"))).To(Succeed())
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, "/repo/overlay")
	g.Expect(err).NotTo(HaveOccurred())
	labelled := map[string]string{}
	for _, r := range res.Resources() {
		labelled[r.GetKind()+" "+r.GetName()] = r.GetLabels()["release"]
	}
	g.Expect(labelled).To(HaveKeyWithValue("PodMonitor "+monitoring.PodMonitorName, "kube-prometheus-stack"))
	g.Expect(labelled).To(HaveKeyWithValue("PrometheusRule "+monitoring.PodMonitorName, "kube-prometheus-stack"))
	for key, release := range labelled {
		if !strings.HasPrefix(key, "PodMonitor ") && !strings.HasPrefix(key, "PrometheusRule ") {
			g.Expect(release).To(BeEmpty(), "%s is labelled release", key)
		}
	}
}

// kustomizeRepo is an in-memory copy of deploy/kustomize, at /repo, as a user's repository holds it.
func kustomizeRepo(t *testing.T) filesys.FileSystem {
	t.Helper()
	fs := filesys.MakeFsInMemory()
	root := filepath.Join(sourceRoot(), KustomizeDir)
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		return fs.WriteFile(filepath.Join("/repo", rel), data)
	})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestTheOperatorComponentBuildsWhatInstallAppliesForAnotherID: the base with the operator
// component builds the objects of caravan install -x ID -n NAMESPACE (not the default operator),
// for the example overlay and for other ids and namespaces, the base's namespace included.
func TestTheOperatorComponentBuildsWhatInstallAppliesForAnotherID(t *testing.T) {
	ch, err := LoadChart(sourceRoot())
	if err != nil {
		t.Fatal(err)
	}
	version := ch.Metadata.AppVersion
	for _, tc := range []struct{ id, namespace string }{
		{"team-a", "team-a"}, // the example's values
		{"billing", "camel-k"},
		{"camel-k-2", "payments-system"},
		{"x", "operator-system"},
	} {
		t.Run(tc.id+"/"+tc.namespace, func(t *testing.T) {
			fs := kustomizeRepo(t)
			overlay := "/repo/" + strings.TrimPrefix(AnotherOperatorExample, KustomizeDir+"/")
			if err := fs.WriteFile(filepath.Join(overlay, "values.yaml"), []byte(valuesDocument(
				[2]string{ValuesID, tc.id}, [2]string{ValuesNamespace, tc.namespace}))); err != nil {
				t.Fatal(err)
			}
			c := Base(Release{Version: version})
			c.ID, c.Namespace, c.Default = tc.id, tc.namespace, false
			expectSameObjects(t, installedObjects(t, c), normalized(t, buildIn(t, fs, overlay)), "the operator component")
		})
	}
}

// TestTheOperatorComponentRefusesValuesItCannotUse: a values ConfigMap without the id or the
// namespace, or none at all, fails the build with kustomize's error naming what is missing.
func TestTheOperatorComponentRefusesValuesItCannotUse(t *testing.T) {
	for _, tc := range []struct {
		values [][2]string
		want   string
	}{
		{[][2]string{{ValuesNamespace, "team-a"}}, "data." + ValuesID},
		{[][2]string{{ValuesID, "team-a"}}, "data." + ValuesNamespace},
		{nil, ValuesName},
	} {
		fs := kustomizeRepo(t)
		overlay := "/repo/" + strings.TrimPrefix(AnotherOperatorExample, KustomizeDir+"/")
		var err error
		if tc.values == nil {
			err = fs.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(
				"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ../../base\ncomponents:\n  - ../../components/operator\n"))
		} else {
			err = fs.WriteFile(filepath.Join(overlay, "values.yaml"), []byte(valuesDocument(tc.values...)))
		}
		if err != nil {
			t.Fatal(err)
		}
		_, err = krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, overlay)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("values %v: got error %v, want one naming %s", tc.values, err, tc.want)
		}
	}
}

// TestTheWatchedNamespacesComponentBuildsWhatInstallAppliesForThoseNamespaces: the base with the
// watched-namespaces component and a kustomization of watched-namespace for each namespace builds
// the objects of caravan install --watch-namespaces, for the base's operator and, with the
// operator component, for another id and namespace (the example overlay). The registration lacks
// the list and asks the operator for it (WatchNamespacesFromAnnotation).
func TestTheWatchedNamespacesComponentBuildsWhatInstallAppliesForThoseNamespaces(t *testing.T) {
	ch, err := LoadChart(sourceRoot())
	if err != nil {
		t.Fatal(err)
	}
	version := ch.Metadata.AppVersion
	for _, tc := range []struct {
		id, namespace string
		watch         []string
		components    []string
	}{
		{"team-a", "team-a", []string{"team-a-dev", "team-a-prod"}, []string{"watched-namespaces", "operator"}},
		{"camel-k", "camel-k", []string{"apps"}, []string{"watched-namespaces"}},
		{"billing", "billing-system", []string{"billing", "invoices", "payments"}, []string{"watched-namespaces", "operator"}},
	} {
		t.Run(tc.id, func(t *testing.T) {
			g := NewWithT(t)
			fs := kustomizeRepo(t)
			overlay := "/repo/" + strings.TrimPrefix(WatchedNamespacesExample, KustomizeDir+"/")
			kustomization := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ../../base\n  - values.yaml\n"
			for _, ns := range tc.watch {
				kustomization += "  - " + ns + "\n"
				g.Expect(fs.WriteFile(filepath.Join(overlay, ns, "kustomization.yaml"), []byte(
					"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: "+ns+
						"\nresources:\n  - ../../../watched-namespace\n"))).To(Succeed())
			}
			kustomization += "components:\n"
			for _, c := range tc.components {
				kustomization += "  - ../../components/" + c + "\n"
			}
			g.Expect(fs.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization))).To(Succeed())
			g.Expect(fs.WriteFile(filepath.Join(overlay, "values.yaml"), []byte(valuesDocument([2]string{ValuesID, tc.id},
				[2]string{ValuesNamespace, tc.namespace}, [2]string{ValuesWatchNamespaces, strings.Join(tc.watch, ",")})))).To(Succeed())

			c := Base(Release{Version: version})
			c.ID, c.Namespace, c.Default, c.WatchNamespaces = tc.id, tc.namespace, tc.id == c.ID, tc.watch
			want := installedObjects(t, c)
			registration := "IntegrationOperator <nil>/" + tc.id
			g.Expect(want).To(HaveKey(registration))
			spec := want[registration].(map[string]any)["spec"].(map[string]any)
			g.Expect(spec).To(HaveKeyWithValue("watchNamespaces", HaveLen(len(tc.watch))))
			delete(spec, "watchNamespaces")
			meta := want[registration].(map[string]any)["metadata"].(map[string]any)
			meta["annotations"].(map[string]any)[camelv1alpha1.WatchNamespacesFromAnnotation] = camelv1alpha1.WatchNamespacesFromOperator
			expectSameObjects(t, want, normalized(t, buildIn(t, fs, overlay)), "the watched-namespaces component")
		})
	}
}

// TestTheWatchedNamespacesExampleBuilds: the example overlay, as the repository holds it, builds
// operator team-b of team-b-dev and team-b-prod.
func TestTheWatchedNamespacesExampleBuilds(t *testing.T) {
	g := NewWithT(t)
	docs := normalized(t, build(t, strings.TrimPrefix(WatchedNamespacesExample, KustomizeDir+"/")))
	d, ok := docs["Deployment team-b/team-b-operator"].(map[string]any)
	g.Expect(ok).To(BeTrue(), "no Deployment team-b-operator in team-b")
	g.Expect(fmt.Sprint(d["spec"])).To(ContainSubstring("--watch-namespaces=team-b-dev,team-b-prod"))
	for _, ns := range []string{"team-b-dev", "team-b-prod"} {
		g.Expect(docs).To(HaveKey("RoleBinding " + ns + "/" + install.ServesRoleName("team-b", "team-b")))
		g.Expect(docs).To(HaveKey("RoleBinding " + ns + "/" + install.ClusterRoleName("team-b", "team-b")))
	}
}
