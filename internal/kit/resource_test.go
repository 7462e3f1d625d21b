package kit

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

func TestAKitResourceRecordsItsSpec(t *testing.T) {
	s := Spec{OperatorID: "a", BaseImage: "base:1", RuntimeVersion: "4.14.0", RuntimeProvider: "jbang",
		Dependencies: []string{"camel:log", "camel:timer"}}.WithRepositories("https://repo.example/maven")
	spec, err := ToResource(s)
	if err != nil {
		t.Fatal(err)
	}
	k := &camelv1.IntegrationKit{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name(),
			Annotations: map[string]string{camelv1.OperatorIDAnnotation: "a"},
			Labels:      map[string]string{SpecHashLabel: s.Hash()}},
		Spec: spec,
	}
	got, err := FromResource(k)
	if err != nil {
		t.Fatal(err)
	}
	if got.Hash() != s.Hash() {
		t.Fatalf("round trip changed the spec: %+v vs %+v", got, s)
	}
	k.Spec.Dependencies = append(k.Spec.Dependencies, "camel:http")
	if _, err := FromResource(k); err == nil || !strings.Contains(err.Error(), "was edited") {
		t.Fatalf("an edited kit must be refused, got %v", err)
	}
}

func TestBuildPropertiesAreRecordedInTheBuilderTraitAndDefineTheKit(t *testing.T) {
	plain := Spec{OperatorID: "a", BaseImage: "base:1", RuntimeVersion: "4.18.0", Dependencies: []string{"camel:log"}}
	s := plain
	s.BuildProperties = []string{"quarkus.banner.enabled=false", "a=b"}
	if s.Hash() == plain.Hash() {
		t.Fatal("two kits that differ in their build properties share a hash")
	}
	spec, err := ToResource(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(spec.Traits["builder"].Raw); got != `{"baseImage":"base:1","properties":["quarkus.banner.enabled=false","a=b"]}` {
		t.Fatalf("builder trait %s", got)
	}
	k := &camelv1.IntegrationKit{ObjectMeta: metav1.ObjectMeta{Name: s.Name(), Labels: map[string]string{SpecHashLabel: s.Hash()},
		Annotations: map[string]string{camelv1.OperatorIDAnnotation: "a"}}, Spec: spec}
	got, err := FromResource(k)
	if err != nil || got.Hash() != s.Hash() {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if plainSpec, _ := ToResource(plain); strings.Contains(string(plainSpec.Traits["builder"].Raw), "properties") {
		t.Error("a kit without build properties records some")
	}
}

func TestBuildResourcesAreRecordedAsCamelKsTaskResourcesAndDefineTheKit(t *testing.T) {
	plain := Spec{OperatorID: "a", BaseImage: "base:1", RuntimeVersion: "4.18.0", Dependencies: []string{"camel:log"}}
	s := plain
	s.BuildResources = map[string]string{"requestCPU": "500m", "limitMemory": "2Gi"}
	if s.Hash() == plain.Hash() {
		t.Fatal("two kits that differ in their build resources share a hash")
	}
	spec, err := ToResource(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(spec.Traits["builder"].Raw); got != `{"baseImage":"base:1","tasksLimitMemory":["builder:2Gi"],"tasksRequestCPU":["builder:500m"]}` {
		t.Fatalf("builder trait %s", got)
	}
	k := &camelv1.IntegrationKit{ObjectMeta: metav1.ObjectMeta{Name: s.Name(), Labels: map[string]string{SpecHashLabel: s.Hash()},
		Annotations: map[string]string{camelv1.OperatorIDAnnotation: "a"}}, Spec: spec}
	got, err := FromResource(k)
	if err != nil || got.Hash() != s.Hash() {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
}
