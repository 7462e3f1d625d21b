// Package builder is what a builder pod runs to make a kit. Maven resolves the kit's
// dependencies (Pod), then Publish layers the jars onto the base image (or onto a Ready
// kit whose jars it already holds) and pushes the result by digest.
package builder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/maven"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// ArtifactsLabel is the kit image's config label that lists its jars, as JSON.
const ArtifactsLabel = "dev.caravan.kit.artifacts"

// Task is one kit build.
type Task struct {
	// Project is what Maven resolves.
	Project maven.Project `json:"project"`
	// BaseImage is the image the jars are layered onto; a name without a
	// registry host is looked up in Registry.
	BaseImage string `json:"baseImage"`
	// Parent, when set, is a Ready kit whose jars this kit's contain: the
	// new layer holds only the jars it lacks, on top of its image.
	Parent *Parent `json:"parent,omitempty"`
	// RegistryAddress, Insecure and Organization say where the kit image is
	// pushed (the platform's registry, without its credentials).
	RegistryAddress string `json:"registry"`
	Insecure        bool   `json:"insecure,omitempty"`
	Organization    string `json:"organization,omitempty"`
	// Auth are the registry's credentials, which the task's JSON never holds; nil, anonymous.
	Auth authn.Authenticator `json:"-"`
	// CACertificates are PEM certificates trusted for the registry besides the system's,
	// read from files the pod mounts; the task's JSON never holds them.
	CACertificates []byte `json:"-"`
	// Repository and Tag name the kit image in Registry.
	Repository string `json:"repository"`
	Tag        string `json:"tag,omitempty"`
	// Labels are added to the kit image's config.
	Labels map[string]string `json:"labels,omitempty"`
}

// Parent is a Ready kit an incremental kit builds on.
type Parent struct {
	// Image is the kit's image by digest.
	Image string `json:"image"`
	// Artifacts are its jars.
	Artifacts []Artifact `json:"artifacts"`
}

// Result is a pushed kit image and what it holds.
type Result struct {
	image.Result
	// Artifacts are all the kit's jars, its parent's included.
	Artifacts []Artifact `json:"artifacts"`
	// Added counts the jars of the new layer.
	Added int `json:"added"`
	// Downloads is what Maven downloaded for this kit.
	Downloads Downloads `json:"downloads"`
}

// Publish layers the jars of Maven's dependency list onto the task's base
// image and pushes the kit image.
func Publish(ctx context.Context, t Task, listFile string) (Result, error) {
	list, err := os.ReadFile(listFile)
	if err != nil {
		return Result{}, fmt.Errorf("reading Maven's dependency list: %w", err)
	}
	arts, err := parseList(list)
	if err != nil {
		return Result{}, err
	}
	if err := checksum(arts); err != nil {
		return Result{}, err
	}
	return t.push(ctx, arts)
}

// checksum fills in each artifact's sha256.
func checksum(arts []Artifact) error {
	for i := range arts {
		f, err := os.Open(arts[i].file)
		if err != nil {
			return fmt.Errorf("reading %s: %w", arts[i].ID, err)
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("reading %s: %w", arts[i].ID, err)
		}
		arts[i].Checksum = "sha256:" + hex.EncodeToString(h.Sum(nil))
	}
	return nil
}

// push layers the jars that the base lacks and pushes the kit image.
func (t Task) push(ctx context.Context, arts []Artifact) (Result, error) {
	base, added, removed := t.BaseImage, arts, []string(nil)
	if t.Parent != nil {
		base, added = t.Parent.Image, missing(arts, t.Parent.Artifacts)
		// A jar of the parent that Maven no longer picks (another version of a
		// transitive dependency) must leave the classpath.
		for _, p := range missing(t.Parent.Artifacts, arts) {
			if !slices.ContainsFunc(added, func(a Artifact) bool { return a.Location == p.Location }) {
				removed = append(removed, p.Location)
			}
		}
	}
	list, err := json.Marshal(arts)
	if err != nil {
		return Result{}, err
	}
	labels := map[string]string{ArtifactsLabel: string(list)}
	for k, v := range t.Labels {
		labels[k] = v
	}
	reg := image.Registry{Address: t.RegistryAddress, Insecure: t.Insecure, Organization: t.Organization, Auth: t.Auth,
		CACertificates: t.CACertificates}
	res, err := image.AppendLayer(ctx, reg, base, jarLayer(added, removed),
		fmt.Sprintf("caravan: %d jars in %s", len(added), runtime.DependenciesDir), labels, t.Repository, t.Tag)
	if err != nil {
		return Result{}, err
	}
	return Result{Result: res, Artifacts: arts, Added: len(added)}, nil
}

// missing returns the artifacts of arts that have is without, by ID and checksum.
func missing(arts, have []Artifact) []Artifact {
	var out []Artifact
	for _, a := range arts {
		if !slices.ContainsFunc(have, func(h Artifact) bool { return h.ID == a.ID && h.Checksum == a.Checksum }) {
			out = append(out, a)
		}
	}
	return out
}

// ImageArtifacts returns the jars a kit image lists in its config (ArtifactsLabel).
func ImageArtifacts(img v1.Image) ([]Artifact, error) {
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading the image config: %w", err)
	}
	list, ok := cfg.Config.Labels[ArtifactsLabel]
	if !ok {
		return nil, fmt.Errorf("the image config has no %s label: no builder pod made it", ArtifactsLabel)
	}
	var arts []Artifact
	if err := json.Unmarshal([]byte(list), &arts); err != nil {
		return nil, fmt.Errorf("the image config's %s label: %w", ArtifactsLabel, err)
	}
	return arts, nil
}
