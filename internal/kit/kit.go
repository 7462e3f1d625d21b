// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

// Package kit decides what defines an IntegrationKit and what its image layer holds.
// It is pure: no network, no API server. Two integrations with the same Spec share one
// kit; a kit is recognised by the spec hash recorded in its SpecHashLabel, and its image
// layer holds the files Layer returns.
package kit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/runtime"
)

const (
	// SpecHashLabel records on an IntegrationKit the Hash of the Spec it was made for.
	SpecHashLabel = "camel.apache.org/kit.spec-hash"
	// ImageHashLabel is the image config label that records the same hash in the image.
	ImageHashLabel = "camel.apache.org/kit.hash"
	// NamePrefix starts every kit name.
	NamePrefix = "kit-"

	// hashVersion is part of every hash: bump it when the hashed fields change, so old
	// kits stop matching instead of matching by accident.
	hashVersion = "v1"
	// hashLength is the number of hex characters of a hash (64 bits).
	hashLength = 16
)

// Spec is what defines a kit: two integrations with equal Specs run on the same kit.
type Spec struct {
	// OperatorID is the operator the kit belongs to. ForIntegration leaves it empty: the
	// caller sets it, so that operators sharing a namespace never share a kit name.
	OperatorID string `json:"operatorID,omitempty"`
	// BaseImage is the image the kit layer is added to.
	BaseImage string `json:"baseImage"`
	// RuntimeVersion is the Camel runtime version.
	RuntimeVersion string `json:"runtimeVersion"`
	// RuntimeProvider is the Camel runtime provider.
	RuntimeProvider string `json:"runtimeProvider"`
	// Dependencies are the dependencies the kit holds, normalised (see
	// NormalizeDependencies), sorted and deduplicated.
	Dependencies []string `json:"dependencies,omitempty"`
	// Repositories are extra Maven repositories, trimmed and deduplicated, in the order
	// given (Maven looks them up in order).
	Repositories []string `json:"repositories,omitempty"`
	// BuildProperties are the builder trait's properties, KEY=VALUE, in the order given: the
	// build gives them to Maven as -DKEY=VALUE.
	BuildProperties []string `json:"buildProperties,omitempty"`
	// BuildResources are the builder trait's requests and limits of the build's Maven container
	// (requestCPU, requestMemory, limitCPU, limitMemory), over the platform's.
	BuildResources map[string]string `json:"buildResources,omitempty"`
}

// ForIntegration returns the Spec of the kit for an integration's dependencies
// (spec.dependencies), the dependencies its traits imply, and its resolved platform
// (see platform.Resolve). Set OperatorID and, when the integration has any,
// Repositories (WithRepositories) on the result.
func ForIntegration(deps []string, traitDeps []string, platform camelv1.IntegrationPlatformSpec) Spec {
	all := make([]string, 0, len(deps)+len(traitDeps))
	all = append(all, deps...)
	all = append(all, traitDeps...)
	return Spec{
		BaseImage:       strings.TrimSpace(platform.Build.BaseImage),
		RuntimeVersion:  strings.TrimSpace(platform.Build.RuntimeVersion),
		RuntimeProvider: strings.TrimSpace(platform.Build.RuntimeProvider),
		Dependencies:    NormalizeDependencies(all),
	}
}

// WithRepositories returns s with repos as its Maven repositories, trimmed, without
// empty entries or duplicates, keeping the first occurrence's position.
func (s Spec) WithRepositories(repos ...string) Spec {
	s.Repositories = normalizeRepositories(repos)
	return s
}

// NormalizeDependencies returns deps as runtime.NormalizeDependency writes each, sorted and
// without empty entries or duplicates. It returns nil for no dependency.
func NormalizeDependencies(deps []string) []string {
	var out []string
	for _, d := range deps {
		if d = runtime.NormalizeDependency(d); d != "" {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func normalizeRepositories(repos []string) []string {
	var out []string
	for _, r := range repos {
		r = strings.TrimSpace(r)
		if r != "" && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// normalized returns s with its lists normalised, so that a Spec built by hand hashes
// and lays out like the same Spec built by ForIntegration.
func (s Spec) normalized() Spec {
	s.OperatorID = strings.TrimSpace(s.OperatorID)
	s.BaseImage = strings.TrimSpace(s.BaseImage)
	s.RuntimeVersion = strings.TrimSpace(s.RuntimeVersion)
	s.RuntimeProvider = strings.TrimSpace(s.RuntimeProvider)
	s.Dependencies = NormalizeDependencies(s.Dependencies)
	s.Repositories = normalizeRepositories(s.Repositories)
	return s
}

// Hash returns a stable 16-character lowercase hex hash of s (after normalisation).
// Equal Specs have equal hashes, whatever the order or spelling of their dependencies.
func (s Spec) Hash() string {
	b, err := json.Marshal(s.normalized())
	if err != nil {
		// A Spec holds only strings: encoding cannot fail.
		panic("kit: encoding a spec: " + err.Error())
	}
	sum := sha256.Sum256(append([]byte(hashVersion+"\n"), b...))
	return hex.EncodeToString(sum[:])[:hashLength]
}

// Name returns the name of the kit of s: NamePrefix followed by its hash, a DNS-1123
// label of 20 characters.
func (s Spec) Name() string {
	return NamePrefix + s.Hash()
}

// Matches tells whether kit was made for s. It trusts only the SpecHashLabel, which the
// operator sets when it creates the kit, never the kit's spec fields, which anyone may
// edit. A kit that is being deleted, or that wraps an external image, never matches.
func Matches(kit *camelv1.IntegrationKit, s Spec) bool {
	if kit == nil || kit.DeletionTimestamp != nil {
		return false
	}
	if kit.Spec.Image != "" || kit.Labels[camelv1.IntegrationKitTypeLabel] == camelv1.IntegrationKitTypeExternal {
		return false
	}
	hash := kit.Labels[SpecHashLabel]
	return hash != "" && hash == s.Hash()
}

// Extends tells whether a kit of child can be built on a kit of parent: the
// same operator, base image, runtime and repositories, and parent's
// dependencies a strict subset of child's.
func (child Spec) Extends(parent Spec) bool {
	c, p := child.normalized(), parent.normalized()
	if c.OperatorID != p.OperatorID || c.BaseImage != p.BaseImage || c.RuntimeVersion != p.RuntimeVersion ||
		c.RuntimeProvider != p.RuntimeProvider || !slices.Equal(c.Repositories, p.Repositories) ||
		len(p.Dependencies) >= len(c.Dependencies) {
		return false
	}
	for _, d := range p.Dependencies {
		if _, found := slices.BinarySearch(c.Dependencies, d); !found {
			return false
		}
	}
	return true
}

// AdoptedFromAnnotation, on a kit that wraps the image of another operator's kit for the same
// dependencies, names that kit. A move sets it so that the integration keeps its pods.
const AdoptedFromAnnotation = "caravan.dev/adopted-from"

// WrappingName names the kit of operator id that wraps image, another operator's kit called
// kit: kit's name, then a hash of the image and id, so that each operator has its own. Only the
// integrations whose pods ran image use it. It is the one rule for a kit that wraps an image.
func WrappingName(kit, image, id string) string {
	sum := sha256.Sum256([]byte(image + "\x00" + id))
	suffix := "-" + hex.EncodeToString(sum[:])[:8]
	// A kit's name is a DNS subdomain, at most 253 characters.
	return strings.TrimRight(kit[:min(len(kit), 253-len(suffix))], "-.") + suffix
}

// AdoptedName returns the name of the kit of s that wraps image, built by another operator for
// the same dependencies: WrappingName of s's own name.
func (s Spec) AdoptedName(image string) string {
	return WrappingName(s.Name(), image, s.OperatorID)
}

// ArchiveCondition is the condition of a Build, and of its kit, that says whether the kit image
// holds a class-data-sharing archive its integrations start from.
const ArchiveCondition = "ClassDataArchive"

// ArchivedAnnotation marks a kit that runs the image of another kit, which holds an archive.
const ArchivedAnnotation = "caravan.dev/class-data-archive"

// HasArchive tells whether the image of k holds a class-data-sharing archive of its classpath.
func HasArchive(k *camelv1.IntegrationKit) bool {
	if k == nil {
		return false
	}
	if k.Spec.Image != "" {
		return k.Annotations[ArchivedAnnotation] == "true"
	}
	c := k.Status.GetCondition(ArchiveCondition)
	return c != nil && c.Status == metav1.ConditionTrue
}
