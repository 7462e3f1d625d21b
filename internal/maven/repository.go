package maven

import (
	"fmt"
	"net/url"
	"strings"
)

// Repository is a Maven repository a kit's project looks up after the settings' own, written as
// Camel K writes one (spec.repositories, kamel run --maven-repository):
// URL[@id=ID][@name=NAME][@snapshots][@noreleases][@checksumpolicy=fail|warn|ignore].
type Repository struct {
	URL  string
	ID   string
	Name string
	// Releases and Snapshots say which versions the repository serves: releases only, unless
	// the form says otherwise.
	Releases, Snapshots bool
	// ChecksumPolicy is Maven's for both: fail unless the form says otherwise.
	ChecksumPolicy string
}

// RepositoryForm is Camel K's form of a repository, as errors name it.
const RepositoryForm = "URL[@id=ID][@name=NAME][@snapshots][@noreleases][@checksumpolicy=fail|warn|ignore]"

// ParseRepository reads a repository in Camel K's form. It refuses what Maven could not use: a URL
// that is not absolute http, https or file, an attribute Camel K does not know, an empty value, a
// checksum policy Maven does not have, a mirror (@mirrorOf=, which belongs in Maven's settings).
func ParseRepository(s string) (Repository, error) {
	s = strings.TrimSpace(s)
	r := Repository{Releases: true, ChecksumPolicy: "fail"}
	raw, attributes, _ := strings.Cut(s, "@")
	r.URL = raw
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "file") || (u.Scheme != "file" && u.Host == "") {
		return Repository{}, fmt.Errorf("repository %q: %q is not an http, https or file URL (the form is %s)", s, raw, RepositoryForm)
	}
	if attributes == "" {
		return r, nil
	}
	for attribute := range strings.SplitSeq(attributes, "@") {
		key, value, hasValue := strings.Cut(attribute, "=")
		if hasValue && value == "" {
			return Repository{}, fmt.Errorf("repository %q: %s has no value", s, key)
		}
		switch {
		case attribute == "snapshots":
			r.Snapshots = true
		case attribute == "noreleases":
			r.Releases = false
		case hasValue && key == "id":
			r.ID = value
		case hasValue && key == "name":
			r.Name = value
		case hasValue && key == "checksumpolicy":
			if value != "fail" && value != "warn" && value != "ignore" {
				return Repository{}, fmt.Errorf("repository %q: checksumpolicy=%s: want fail, warn or ignore", s, value)
			}
			r.ChecksumPolicy = value
		case hasValue && key == "mirrorOf":
			return Repository{}, fmt.Errorf("repository %q: a mirror (mirrorOf) is not a repository: give it in the platform's Maven settings", s)
		default:
			return Repository{}, fmt.Errorf("repository %q: unknown attribute %q (the form is %s)", s, attribute, RepositoryForm)
		}
	}
	return r, nil
}

// ParseRepositories reads each repository of repos (ParseRepository).
func ParseRepositories(repos []string) ([]Repository, error) {
	out := make([]Repository, 0, len(repos))
	for _, s := range repos {
		r, err := ParseRepository(s)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
