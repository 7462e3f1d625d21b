// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package crd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// repoRoot is the module root, seen from this package's directory.
const repoRoot = "../.."

const operatorColumnPath = `.metadata.annotations.camel\.apache\.org/operator\.id`

func TestGeneratedFilesAreUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs controller-gen; skipped with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to regenerate: %v", err)
	}
	tmp := t.TempDir()
	runs := [][]string{
		{"crd", "paths=./api/...", "output:crd:artifacts:config=" + filepath.Join(tmp, "crd")},
		{"object:headerFile=hack/boilerplate.go.txt", "paths=./api/v1", "output:object:dir=" + filepath.Join(tmp, "v1")},
		{"object:headerFile=hack/boilerplate.go.txt", "paths=./api/v1alpha1", "output:object:dir=" + filepath.Join(tmp, "v1alpha1")},
		{"rbac:roleName=caravan-operator", "paths=./internal/operator/...;./internal/controller/...", "output:rbac:artifacts:config=" + filepath.Join(tmp, "rbac")},
	}
	for _, args := range runs {
		cmd := exec.Command(goBin, append([]string{"tool", "controller-gen"}, args...)...)
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("controller-gen %v: %v\n%s", args, err, out)
		}
	}

	compareDirs(t, filepath.Join(repoRoot, "config/crd/bases"), filepath.Join(tmp, "crd"))
	compareFile(t, filepath.Join(repoRoot, "config/rbac/role.yaml"), filepath.Join(tmp, "rbac", "role.yaml"))
	for _, pkg := range []string{"v1", "v1alpha1"} {
		compareFile(t, filepath.Join(repoRoot, "api", pkg, "zz_generated.deepcopy.go"), filepath.Join(tmp, pkg, "zz_generated.deepcopy.go"))
	}
}

// compareDirs fails unless both directories hold the same files with the same bytes.
func compareDirs(t *testing.T, committed, generated string) {
	t.Helper()
	want := fileNames(t, generated)
	got := fileNames(t, committed)
	for _, name := range want {
		compareFile(t, filepath.Join(committed, name), filepath.Join(generated, name))
	}
	for _, name := range got {
		if !slices.Contains(want, name) {
			t.Errorf("%s is not generated any more; run `make generate`", display(filepath.Join(committed, name)))
		}
	}
}

func compareFile(t *testing.T, committed, generated string) {
	t.Helper()
	want, err := os.ReadFile(generated)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(committed)
	if err != nil {
		t.Errorf("%s is missing; run `make generate`", display(committed))
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what controller-gen generates; run `make generate`", display(committed))
	}
}

// display shows a path relative to the repository root.
func display(path string) string {
	if rel, err := filepath.Rel(repoRoot, path); err == nil {
		return rel
	}
	return path
}

func fileNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

type expectedCRD struct {
	name      string
	kind      string
	shortName string
	version   string
	scope     apiextensionsv1.ResourceScope
	scale     bool
	columns   []string
}

var expectedCRDs = []expectedCRD{
	{"builds.camel.apache.org", "Build", "ikb", "v1", apiextensionsv1.NamespaceScoped, false,
		[]string{"Phase", "Ready", "Attempts", "Duration", "Operator", "Age", "Started"}},
	{"camelcatalogs.camel.apache.org", "CamelCatalog", "cc", "v1", apiextensionsv1.NamespaceScoped, false,
		[]string{"Runtime Version", "Runtime Provider", "Phase", "Operator", "Age"}},
	{"integrationkits.camel.apache.org", "IntegrationKit", "ik", "v1", apiextensionsv1.NamespaceScoped, false,
		[]string{"Phase", "Type", "Provider", "Image", "Ready", "Operator", "Archive", "Age"}},
	{"integrationoperators.camel.apache.org", "IntegrationOperator", "iop", "v1alpha1", apiextensionsv1.ClusterScoped, false,
		[]string{"Namespace", "Default", "Version", "Leader", "Heartbeat", "Ready", "Canary", "Age"}},
	{"integrationplatforms.camel.apache.org", "IntegrationPlatform", "itp", "v1", apiextensionsv1.NamespaceScoped, false,
		[]string{"Phase", "Registry address", "Default runtime", "Ready", "Operator", "Age"}},
	{"integrationprofiles.camel.apache.org", "IntegrationProfile", "ipr", "v1", apiextensionsv1.NamespaceScoped, false,
		[]string{"Phase", "Operator", "Age"}},
	{"integrations.camel.apache.org", "Integration", "it", "v1", apiextensionsv1.NamespaceScoped, true,
		[]string{"Phase", "Ready", "Operator", "Kit", "Age", "Image", "Replicas", "Owner", "Epoch"}},
	{"kameletbindings.camel.apache.org", "KameletBinding", "klb", "v1alpha1", apiextensionsv1.NamespaceScoped, true,
		[]string{"Phase", "Ready", "Operator", "Replicas", "Age"}},
	{"kamelets.camel.apache.org", "Kamelet", "kl", "v1", apiextensionsv1.NamespaceScoped, false,
		[]string{"Phase", "Ready", "Operator", "Age"}},
	{"pipes.camel.apache.org", "Pipe", "pp", "v1", apiextensionsv1.NamespaceScoped, true,
		[]string{"Phase", "Ready", "Operator", "Replicas", "Age"}},
}

func TestCustomResourceDefinitions(t *testing.T) {
	crds, err := CustomResourceDefinitions()
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) != len(expectedCRDs) {
		t.Fatalf("got %d CRDs, want %d", len(crds), len(expectedCRDs))
	}
	for i, want := range expectedCRDs {
		d := crds[i]
		t.Run(want.kind, func(t *testing.T) {
			if d.Name != want.name {
				t.Fatalf("CRD %d is %s, want %s (sorted by name)", i, d.Name, want.name)
			}
			checkNames(t, d, want)
			checkVersion(t, d, want)
		})
	}
}

func checkNames(t *testing.T, d *apiextensionsv1.CustomResourceDefinition, want expectedCRD) {
	t.Helper()
	if d.Spec.Group != "camel.apache.org" {
		t.Errorf("group is %q", d.Spec.Group)
	}
	if d.Spec.Names.Kind != want.kind || d.Spec.Names.ListKind != want.kind+"List" {
		t.Errorf("kind is %q, list kind %q", d.Spec.Names.Kind, d.Spec.Names.ListKind)
	}
	if !slices.Equal(d.Spec.Names.ShortNames, []string{want.shortName}) {
		t.Errorf("short names are %v, want [%s]", d.Spec.Names.ShortNames, want.shortName)
	}
	if !slices.Equal(d.Spec.Names.Categories, []string{"kamel", "camel"}) {
		t.Errorf("categories are %v, want [kamel camel]", d.Spec.Names.Categories)
	}
	if d.Spec.Scope != want.scope {
		t.Errorf("scope is %s, want %s", d.Spec.Scope, want.scope)
	}
}

func checkVersion(t *testing.T, d *apiextensionsv1.CustomResourceDefinition, want expectedCRD) {
	t.Helper()
	if len(d.Spec.Versions) != 1 {
		t.Fatalf("got %d versions, want 1", len(d.Spec.Versions))
	}
	v := d.Spec.Versions[0]
	if v.Name != want.version || !v.Served || !v.Storage {
		t.Errorf("version %s served=%t storage=%t, want %s served and stored", v.Name, v.Served, v.Storage, want.version)
	}
	if v.Subresources == nil || v.Subresources.Status == nil {
		t.Errorf("no status subresource")
	}
	checkScale(t, v.Subresources, want.scale)

	var names []string
	for _, c := range v.AdditionalPrinterColumns {
		names = append(names, c.Name)
		if c.Name == "Operator" && c.JSONPath != operatorColumnPath {
			t.Errorf("Operator column path is %s, want %s", c.JSONPath, operatorColumnPath)
		}
		if c.Name == "Ready" && c.JSONPath != `.status.conditions[?(@.type=="Ready")].status` {
			t.Errorf("Ready column path is %s", c.JSONPath)
		}
	}
	if !slices.Equal(names, want.columns) {
		t.Errorf("print columns are %q, want %q", names, want.columns)
	}
	if namespaced := want.scope == apiextensionsv1.NamespaceScoped; namespaced != slices.Contains(names, "Operator") {
		t.Errorf("Operator column present=%t, want %t", !namespaced, namespaced)
	}
}

func checkScale(t *testing.T, sub *apiextensionsv1.CustomResourceSubresources, want bool) {
	t.Helper()
	if sub == nil || sub.Scale == nil {
		if want {
			t.Errorf("no scale subresource")
		}
		return
	}
	if !want {
		t.Errorf("unexpected scale subresource")
		return
	}
	s := sub.Scale
	if s.SpecReplicasPath != ".spec.replicas" || s.StatusReplicasPath != ".status.replicas" ||
		s.LabelSelectorPath == nil || *s.LabelSelectorPath != ".status.selector" {
		t.Errorf("scale paths are %s, %s, %v", s.SpecReplicasPath, s.StatusReplicasPath, s.LabelSelectorPath)
	}
}
