package maven

import (
	"strings"
	"testing"

	"github.com/caravan-dev/caravan/internal/runtime"
)

// TestARepositoryIsReadAsCamelKWritesIt: the forms of Camel K's own tests of its repository
// syntax, and what Maven could not use, refused with what to write.
func TestARepositoryIsReadAsCamelKWritesIt(t *testing.T) {
	releases := Repository{URL: "http://nexus/public", Releases: true, ChecksumPolicy: "fail"}
	with := func(f func(*Repository)) Repository { r := releases; f(&r); return r }
	for in, want := range map[string]Repository{
		"http://nexus/public":                     releases,
		" http://nexus/public ":                   releases,
		"http://nexus/public@snapshots":           with(func(r *Repository) { r.Snapshots = true }),
		"http://nexus/public@snapshots@id=test":   with(func(r *Repository) { r.Snapshots, r.ID = true, "test" }),
		"http://nexus/public@id=test":             with(func(r *Repository) { r.ID = "test" }),
		"http://nexus/public@checksumpolicy=warn": with(func(r *Repository) { r.ChecksumPolicy = "warn" }),
		"https://repo.example/m2@noreleases@snapshots@name=Nightly": {URL: "https://repo.example/m2", Name: "Nightly",
			Snapshots: true, ChecksumPolicy: "fail"},
		"file:///srv/m2": {URL: "file:///srv/m2", Releases: true, ChecksumPolicy: "fail"},
	} {
		got, err := ParseRepository(in)
		if err != nil || got != want {
			t.Errorf("%q: got %+v, %v; want %+v", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"nexus/public":                "is not an http, https or file URL",
		"http:///public":              "is not an http, https or file URL",
		"ftp://nexus/public":          "is not an http, https or file URL",
		"":                            "is not an http, https or file URL",
		"http://nexus/public@id=":     "id has no value",
		"http://nexus/public@release": `unknown attribute "release"`,
		"http://nexus/public@checksumpolicy=strict":     "want fail, warn or ignore",
		"http://nexus/public@mirrorOf=central@id=local": "a mirror (mirrorOf) is not a repository",
	} {
		_, err := ParseRepository(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", in, err, want)
		}
	}
}

// TestThePOMListsRepositoriesWithTheirPolicies: a repository's id, name and policies reach the
// pom; one without an id is numbered; a bad one fails the pom.
func TestThePOMListsRepositoriesWithTheirPolicies(t *testing.T) {
	p := NewProject(runtime.Main, "4.18.0", nil, []string{"https://repo.example/m2@id=nightly@name=Nightly@snapshots@noreleases", "http://nexus/public"})
	pom, err := p.POM()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"<id>nightly</id>\n      <name>Nightly</name>\n      <url>https://repo.example/m2</url>\n" +
			"      <releases>\n        <enabled>false</enabled>\n        <checksumPolicy>fail</checksumPolicy>\n      </releases>\n" +
			"      <snapshots>\n        <enabled>true</enabled>",
		"<id>repository-2</id>\n      <url>http://nexus/public</url>\n      <releases>\n        <enabled>true</enabled>",
	} {
		if !strings.Contains(string(pom), want) {
			t.Errorf("the pom lacks\n%s\nin\n%s", want, pom)
		}
	}
	p.Repositories = []string{"nexus/public"}
	if _, err := p.POM(); err == nil {
		t.Error("a repository that is no URL made a pom")
	}
}
