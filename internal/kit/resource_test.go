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

// TestTheBuildersSettingsAreRecordedInTheBuilderTraitAndDefineTheKit: the build properties and
// the build resources (as Camel K's task resources) go into the kit's builder trait, change its
// hash, and are read back; a kit without them records none.
func TestTheBuildersSettingsAreRecordedInTheBuilderTraitAndDefineTheKit(t *testing.T) {
	plain := Spec{OperatorID: "a", BaseImage: "base:1", RuntimeVersion: "4.18.0", Dependencies: []string{"camel:log"}}
	for _, tc := range []struct {
		what    string
		set     func(*Spec)
		builder string
	}{
		{"build properties", func(s *Spec) { s.BuildProperties = []string{"quarkus.banner.enabled=false", "a=b"} },
			`{"baseImage":"base:1","properties":["quarkus.banner.enabled=false","a=b"]}`},
		{"build resources", func(s *Spec) { s.BuildResources = map[string]string{"requestCPU": "500m", "limitMemory": "2Gi"} },
			`{"baseImage":"base:1","tasksLimitMemory":["builder:2Gi"],"tasksRequestCPU":["builder:500m"]}`},
	} {
		s := plain
		tc.set(&s)
		if s.Hash() == plain.Hash() {
			t.Fatalf("two kits that differ in their %s share a hash", tc.what)
		}
		spec, err := ToResource(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(spec.Traits["builder"].Raw); got != tc.builder {
			t.Fatalf("%s: builder trait %s, want %s", tc.what, got, tc.builder)
		}
		k := &camelv1.IntegrationKit{ObjectMeta: metav1.ObjectMeta{Name: s.Name(), Labels: map[string]string{SpecHashLabel: s.Hash()},
			Annotations: map[string]string{camelv1.OperatorIDAnnotation: "a"}}, Spec: spec}
		got, err := FromResource(k)
		if err != nil || got.Hash() != s.Hash() {
			t.Fatalf("%s: round trip: %+v, %v", tc.what, got, err)
		}
	}
	if plainSpec, _ := ToResource(plain); string(plainSpec.Traits["builder"].Raw) != `{"baseImage":"base:1"}` {
		t.Errorf("a kit without build properties or resources records some: %s", plainSpec.Traits["builder"].Raw)
	}
}
