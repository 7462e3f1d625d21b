// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package kit

import (
	"regexp"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

func platformSpec() camelv1.IntegrationPlatformSpec {
	return camelv1.IntegrationPlatformSpec{Build: camelv1.IntegrationPlatformBuildSpec{
		BaseImage: "camel/runtime:4.14.0", RuntimeVersion: "4.14.0", RuntimeProvider: "jbang",
	}}
}

func TestForIntegration(t *testing.T) {
	cases := []struct {
		name      string
		deps      []string
		traitDeps []string
		want      []string
	}{
		{name: "no dependency gives no dependency", want: nil},
		{name: "a camel-xxx dependency is written camel:xxx", deps: []string{"camel-kafka"}, want: []string{"camel:kafka"}},
		{name: "a camel:xxx dependency is kept", deps: []string{"camel:kafka"}, want: []string{"camel:kafka"}},
		{name: "a maven dependency is kept as written", deps: []string{"mvn:org.acme:lib:1.0"}, want: []string{"mvn:org.acme:lib:1.0"}},
		{name: "white space around a dependency is trimmed and empty ones are dropped",
			deps: []string{"  camel:http ", "", "   "}, want: []string{"camel:http"}},
		{name: "both spellings of one component count once",
			deps: []string{"camel-http", "camel:http"}, want: []string{"camel:http"}},
		{name: "trait dependencies are merged with the integration's, sorted",
			deps: []string{"mvn:org.acme:lib:1.0", "camel:timer"}, traitDeps: []string{"camel:platform-http", "camel-timer"},
			want: []string{"camel:platform-http", "camel:timer", "mvn:org.acme:lib:1.0"}},
		{name: "a bare camel- prefix is kept as written", deps: []string{"camel-"}, want: []string{"camel-"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			s := ForIntegration(tc.deps, tc.traitDeps, platformSpec())
			g.Expect(s.Dependencies).To(Equal(tc.want))
			g.Expect(s.BaseImage).To(Equal("camel/runtime:4.14.0"))
			g.Expect(s.RuntimeVersion).To(Equal("4.14.0"))
			g.Expect(s.RuntimeProvider).To(Equal("jbang"))
		})
	}
}

func TestHash(t *testing.T) {
	base := ForIntegration([]string{"camel:http", "mvn:org.acme:lib:1.0"}, nil, platformSpec())
	base.OperatorID = "tenant-a"
	cases := []struct {
		name   string
		change func(s Spec) Spec
		same   bool
	}{
		{name: "dependencies in another order and spelling give the same hash", same: true, change: func(s Spec) Spec {
			s.Dependencies = []string{" mvn:org.acme:lib:1.0", "camel-http", "camel:http"}
			return s
		}},
		{name: "trait dependencies count like integration dependencies", same: true, change: func(s Spec) Spec {
			out := ForIntegration([]string{"camel:http"}, []string{"mvn:org.acme:lib:1.0"}, platformSpec())
			out.OperatorID = s.OperatorID
			return out
		}},
		{name: "another dependency changes the hash", change: func(s Spec) Spec {
			s.Dependencies = append(s.Dependencies, "camel:kafka")
			return s
		}},
		{name: "another base image changes the hash", change: func(s Spec) Spec { s.BaseImage = "camel/runtime:4.15.0"; return s }},
		{name: "another runtime version changes the hash", change: func(s Spec) Spec { s.RuntimeVersion = "4.15.0"; return s }},
		{name: "another runtime provider changes the hash", change: func(s Spec) Spec { s.RuntimeProvider = "quarkus"; return s }},
		{name: "another operator changes the hash", change: func(s Spec) Spec { s.OperatorID = "tenant-b"; return s }},
		{name: "a repository changes the hash", change: func(s Spec) Spec { return s.WithRepositories("https://maven.acme.test/repo") }},
		{name: "blank repositories are ignored", same: true, change: func(s Spec) Spec {
			return s.WithRepositories("", " ")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			changed := tc.change(base)
			if tc.same {
				g.Expect(changed.Hash()).To(Equal(base.Hash()))
			} else {
				g.Expect(changed.Hash()).NotTo(Equal(base.Hash()))
			}
		})
	}
}

func TestNameIsAShortDNSLabel(t *testing.T) {
	g := NewWithT(t)
	s := ForIntegration([]string{"camel:http"}, nil, platformSpec())
	g.Expect(s.Hash()).To(MatchRegexp(`^[0-9a-f]{16}$`))
	g.Expect(s.Name()).To(Equal("kit-" + s.Hash()))
	g.Expect(validation.IsDNS1123Label(s.Name())).To(BeEmpty())
	g.Expect(validation.IsValidLabelValue(s.Hash())).To(BeEmpty())
	g.Expect(s.Hash()).To(Equal(s.Hash()), "the hash is stable")
}

func TestAnAdoptedKitIsNamedByItsSpecAndTheImageItWraps(t *testing.T) {
	g := NewWithT(t)
	s := ForIntegration([]string{"camel:http"}, nil, platformSpec())
	a := s.AdoptedName("registry/kit-a@sha256:0123")
	g.Expect(a).To(MatchRegexp(`^` + s.Name() + `-[0-9a-f]{8}$`))
	g.Expect(validation.IsDNS1123Label(a)).To(BeEmpty())
	g.Expect(a).To(Equal(s.AdoptedName("registry/kit-a@sha256:0123")), "the name is stable")
	g.Expect(a).NotTo(Equal(s.AdoptedName("registry/kit-c@sha256:4567")), "two images share a name")
	g.Expect(a).To(Equal(WrappingName(s.Name(), "registry/kit-a@sha256:0123", s.OperatorID)), "one rule names every wrapping kit")
}

func TestAWrappingKitIsNamedForEachOperatorWithinANamesLength(t *testing.T) {
	g := NewWithT(t)
	a := WrappingName("promoted", "registry/kit@sha256:01", "a")
	g.Expect(a).To(MatchRegexp(`^promoted-[0-9a-f]{8}$`))
	g.Expect(a).NotTo(Equal(WrappingName("promoted", "registry/kit@sha256:01", "b")), "two operators share a kit")
	long := WrappingName(strings.Repeat("k", 250)+".x", "registry/kit@sha256:01", "a")
	g.Expect(validation.IsDNS1123Subdomain(long)).To(BeEmpty())
}

func TestRepositoriesKeepTheirOrder(t *testing.T) {
	g := NewWithT(t)
	s := Spec{}.WithRepositories(" https://b.test/ ", "https://a.test/", "https://b.test/", "")
	g.Expect(s.Repositories).To(Equal([]string{"https://b.test/", "https://a.test/"}))
}

func TestMatches(t *testing.T) {
	s := ForIntegration([]string{"camel:http"}, nil, platformSpec())
	s.OperatorID = "tenant-a"
	kit := func(labels map[string]string, mutate ...func(*camelv1.IntegrationKit)) *camelv1.IntegrationKit {
		k := &camelv1.IntegrationKit{ObjectMeta: metav1.ObjectMeta{Name: s.Name(), Labels: labels}}
		k.Spec.Dependencies = s.Dependencies
		for _, m := range mutate {
			m(k)
		}
		return k
	}
	now := metav1.Now()
	cases := []struct {
		name string
		kit  *camelv1.IntegrationKit
		want bool
	}{
		{name: "a kit labelled with the spec's hash matches", kit: kit(map[string]string{SpecHashLabel: s.Hash()}), want: true},
		{name: "a kit without the label does not match even with the same dependencies", kit: kit(nil)},
		{name: "a kit labelled with another hash does not match", kit: kit(map[string]string{SpecHashLabel: "0123456789abcdef"})},
		{name: "a kit being deleted does not match", kit: kit(map[string]string{SpecHashLabel: s.Hash()},
			func(k *camelv1.IntegrationKit) { k.DeletionTimestamp = &now })},
		{name: "an external kit does not match", kit: kit(map[string]string{SpecHashLabel: s.Hash()},
			func(k *camelv1.IntegrationKit) { k.Spec.Image = "registry.test/app:1" })},
		{name: "a kit typed external does not match", kit: kit(map[string]string{
			SpecHashLabel: s.Hash(), camelv1.IntegrationKitTypeLabel: camelv1.IntegrationKitTypeExternal})},
		{name: "no kit does not match", kit: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(Matches(tc.kit, s)).To(Equal(tc.want))
		})
	}
}

func TestLayer(t *testing.T) {
	s := ForIntegration([]string{"camel-http", "mvn:org.acme:lib:1.0"}, []string{"camel:timer"}, platformSpec())
	cases := []struct {
		name    string
		spec    Spec
		want    map[string]string
		wantErr string
	}{
		{name: "a kit lists its dependencies and runtime settings", spec: s, want: map[string]string{
			DependenciesFile: "camel:http\ncamel:timer\nmvn:org.acme:lib:1.0\n",
			PropertiesFile:   "camel.runtime.version=4.14.0\ncamel.runtime.provider=jbang\ncamel.kit.hash=" + s.Hash() + "\n",
		}},
		{name: "a kit with repositories lists them too", spec: s.WithRepositories("https://maven.acme.test/repo"), want: map[string]string{
			DependenciesFile: "camel:http\ncamel:timer\nmvn:org.acme:lib:1.0\n",
			PropertiesFile: "camel.runtime.version=4.14.0\ncamel.runtime.provider=jbang\ncamel.kit.hash=" +
				s.WithRepositories("https://maven.acme.test/repo").Hash() + "\n",
			RepositoriesFile: "https://maven.acme.test/repo\n",
		}},
		{name: "a kit without dependencies has an empty dependency list",
			spec: ForIntegration(nil, nil, platformSpec()), want: map[string]string{
				DependenciesFile: "",
				PropertiesFile:   "camel.runtime.version=4.14.0\ncamel.runtime.provider=jbang\ncamel.kit.hash=" + ForIntegration(nil, nil, platformSpec()).Hash() + "\n",
			}},
		{name: "a spec without runtime version is refused", spec: Spec{RuntimeProvider: "jbang"}, wantErr: "no runtime version"},
		{name: "a spec without runtime provider is refused", spec: Spec{RuntimeVersion: "4"}, wantErr: "no runtime provider"},
		{name: "a dependency with white space inside is refused",
			spec: Spec{RuntimeVersion: "4", RuntimeProvider: "jbang", Dependencies: []string{"camel:a b"}}, wantErr: `dependency "camel:a b"`},
		{name: "a runtime version with a line break is refused",
			spec: Spec{RuntimeVersion: "4\nx=y", RuntimeProvider: "jbang"}, wantErr: "runtime version"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			files, err := Layer(tc.spec)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			got := map[string]string{}
			var paths []string
			for _, f := range files {
				g.Expect(f.Mode).To(Equal(FileMode))
				g.Expect(f.Path).To(MatchRegexp("^" + regexp.QuoteMeta(Dir) + `[a-z.]+$`))
				got[f.Path] = string(f.Content)
				paths = append(paths, f.Path)
			}
			g.Expect(got).To(Equal(tc.want))
			g.Expect(paths).To(BeSortedByPath())
			g.Expect(HashOf(files)).To(Equal(tc.spec.Hash()))
		})
	}
}

func TestLayerIsDeterministic(t *testing.T) {
	g := NewWithT(t)
	a, err := Layer(ForIntegration([]string{"camel:b", "camel:a"}, nil, platformSpec()))
	g.Expect(err).NotTo(HaveOccurred())
	b, err := Layer(ForIntegration([]string{"camel-a"}, []string{"camel:b"}, platformSpec()))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(a).To(Equal(b))
}

func TestHashOfFilesWithoutPropertiesIsEmpty(t *testing.T) {
	NewWithT(t).Expect(HashOf([]File{{Path: DependenciesFile, Content: []byte("camel:a\n")}})).To(BeEmpty())
}

// BeSortedByPath succeeds for a string slice in ascending order.
func BeSortedByPath() OmegaMatcher {
	return WithTransform(func(paths []string) bool {
		for i := 1; i < len(paths); i++ {
			if paths[i-1] > paths[i] {
				return false
			}
		}
		return true
	}, BeTrue())
}

func TestAKitExtendsOnlyAKitWhoseDependenciesItHoldsAndMore(t *testing.T) {
	base := Spec{OperatorID: "a", BaseImage: "caravan/base:java17", RuntimeVersion: "4.18.0", RuntimeProvider: "main"}
	with := func(s Spec, deps ...string) Spec { s.Dependencies = deps; return s }
	for _, tc := range []struct {
		name          string
		child, parent Spec
		want          bool
	}{
		{"the runtime kit is extended by a kit with one more dependency", with(base, "camel:jackson"), base, true},
		{"a subset in another spelling is a subset", with(base, "camel:http", "camel:jackson"), with(base, "camel-jackson"), true},
		{"an equal set is the same kit, not a parent", with(base, "camel:jackson"), with(base, "camel:jackson"), false},
		{"a parent with a dependency the child lacks is refused", with(base, "camel:jackson"), with(base, "camel:http"), false},
		{"another operator's kit is refused", with(base, "camel:jackson"), func() Spec { s := base; s.OperatorID = "b"; return s }(), false},
		{"another Camel version is refused", with(base, "camel:jackson"), func() Spec { s := base; s.RuntimeVersion = "4.14.0"; return s }(), false},
		{"another base image is refused", with(base, "camel:jackson"), func() Spec { s := base; s.BaseImage = "other:1"; return s }(), false},
		{"other repositories are refused", with(base, "camel:jackson"), base.WithRepositories("https://repo.example/maven"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.child.Extends(tc.parent); got != tc.want {
				t.Fatalf("Extends = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAKitHasAnArchiveWhenItsBuildMadeOneOrTheKitItWrapsHasOne(t *testing.T) {
	built := &camelv1.IntegrationKit{}
	if HasArchive(built) || HasArchive(nil) {
		t.Error("a kit without the condition has an archive")
	}
	built.Status.SetCondition(metav1.Condition{Type: ArchiveCondition, Status: metav1.ConditionTrue, Reason: "Archived"})
	built.Status.Image = "reg/kit@sha256:1"
	if !HasArchive(built) {
		t.Error("a kit whose build archived its classes has no archive")
	}
	w := wrapper(built, "w", "b")
	if !HasArchive(w) {
		t.Error("a kit of the image of a kit with an archive has none: a moved integration's pods would restart")
	}
	built.Status.SetCondition(metav1.Condition{Type: ArchiveCondition, Status: metav1.ConditionFalse, Reason: "NoArchive"})
	if HasArchive(built) || HasArchive(wrapper(built, "w", "b")) {
		t.Error("a kit whose build made no archive has one")
	}
}
