// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

// Package digest computes what defines an integration: a stable hash of the parts of an
// Integration that decide its kit and what its pods run. A change of digest means the
// integration must be initialised again and its pods rolled.
package digest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// Version prefixes every digest; it changes when the digested fields change, so that an
// upgrade re-initialises integrations once instead of comparing unlike digests forever.
const Version = "v2"

// inputs are the digested parts of an Integration. Field names and order are part of the
// digest: renaming or reordering them changes every digest, so bump Version with them.
type inputs struct {
	Sources            []camelv1.SourceSpec        `json:"sources,omitempty"`
	Flows              []any                       `json:"flows,omitempty"`
	Traits             map[string]any              `json:"traits,omitempty"`
	Dependencies       []string                    `json:"dependencies,omitempty"`
	IntegrationKit     *corev1.ObjectReference     `json:"integrationKit,omitempty"`
	Profile            string                      `json:"profile,omitempty"`
	Template           any                         `json:"template,omitempty"`
	Configuration      []camelv1.ConfigurationSpec `json:"configuration,omitempty"`
	Repositories       []string                    `json:"repositories,omitempty"`
	ServiceAccountName string                      `json:"serviceAccountName,omitempty"`
	Git                any                         `json:"git,omitempty"`
}

// Integration returns the digest of it: "v2-" followed by the lowercase base32 of a SHA-256
// (55 characters, usable as an env var value and as a label value).
//
// It covers sources, flows, traits, dependencies, spec.integrationKit, profile, template,
// configuration, repositories, serviceAccountName and git. It leaves out replicas (scaling
// must not re-initialise), status, labels and annotations, the operator id among them: a
// move to another operator re-initialises through the adoption, and rolls the pods only
// when the new owner runs something else (another kit's image, say). Key order inside trait, flow and
// template trees does not change the digest. It fails only on malformed JSON trees.
func Integration(it *camelv1.Integration) (string, error) {
	spec := it.Spec
	in := inputs{
		Sources:            spec.Sources,
		Dependencies:       spec.Dependencies,
		IntegrationKit:     spec.IntegrationKit,
		Profile:            spec.Profile,
		Configuration:      spec.Configuration,
		Repositories:       spec.Repositories,
		ServiceAccountName: spec.ServiceAccountName,
	}
	var errs []string
	canonical := func(field string, raw []byte) any {
		v, err := canonicalJSON(raw)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", field, err))
		}
		return v
	}
	for i, f := range spec.Flows {
		in.Flows = append(in.Flows, canonical(fmt.Sprintf("spec.flows[%d]", i), f.Raw))
	}
	for _, name := range slices.Sorted(maps.Keys(spec.Traits)) {
		if in.Traits == nil {
			in.Traits = make(map[string]any, len(spec.Traits))
		}
		in.Traits[name] = canonical("spec.traits."+name, spec.Traits[name].Raw)
	}
	if spec.Template != nil {
		in.Template = canonical("spec.template", spec.Template.Raw)
	}
	if spec.Git != nil {
		in.Git = canonical("spec.git", spec.Git.Raw)
	}
	if len(errs) > 0 {
		return "", fmt.Errorf("digest of integration %s: %s", it.Name, strings.Join(errs, "; "))
	}
	b, err := json.Marshal(in)
	if err != nil {
		return "", fmt.Errorf("digest of integration %s: %w", it.Name, err)
	}
	sum := sha256.Sum256(b)
	return Version + "-" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:])), nil
}

// canonicalJSON decodes a JSON tree so that re-encoding it sorts object keys. Numbers are
// kept as written. An empty tree reads as null.
func canonicalJSON(raw []byte) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("invalid JSON: more than one value")
	}
	return v, nil
}
