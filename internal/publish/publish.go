// Package publish is the builder pod's last step: it layers the jars Maven resolved onto
// the base image (or onto a Ready kit whose jars it already holds) and pushes the kit
// image by digest, with its jars listed in the image's config.
package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/maven"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// ArtifactsLabel is the kit image's config label that lists its jars, as JSON.
const ArtifactsLabel = "dev.caravan.kit.artifacts"

// Request is what one builder pod makes: the Maven project it resolves and the kit image
// it pushes. The publish container reads it as JSON.
type Request struct {
	// Project is what Maven resolves.
	Project maven.Project `json:"project"`
	// BaseImage is the image the jars are layered onto; a name without a
	// registry host is looked up in Registry.
	BaseImage string `json:"baseImage"`
	// Parent, when set, is a Ready kit whose jars this kit's contain: the
	// new layer holds only the jars it lacks, on top of its image.
	Parent *build.Parent `json:"parent,omitempty"`
	// RegistryAddress, Insecure and Organization say where the kit image is
	// pushed (the platform's registry, without its credentials).
	RegistryAddress string `json:"registry"`
	Insecure        bool   `json:"insecure,omitempty"`
	Organization    string `json:"organization,omitempty"`
	// Auth are the registry's credentials, which the request's JSON never holds; nil, anonymous.
	Auth authn.Authenticator `json:"-"`
	// CACertificates are PEM certificates trusted for the registry besides the system's,
	// read from files the pod mounts; the request's JSON never holds them.
	CACertificates []byte `json:"-"`
	// Repository and Tag name the kit image in Registry.
	Repository string `json:"repository"`
	Tag        string `json:"tag,omitempty"`
	// Labels are added to the kit image's config.
	Labels map[string]string `json:"labels,omitempty"`
}

// Result is a pushed kit image and what it holds.
type Result struct {
	image.Result
	// Artifacts are all the kit's jars, its parent's included.
	Artifacts []maven.Artifact `json:"artifacts"`
	// Added counts the jars of the new layer.
	Added int `json:"added"`
	// Downloads is what Maven downloaded for this kit.
	Downloads maven.Downloads `json:"downloads"`
	// Archive says whether the kit image holds a class-data-sharing archive, and why not.
	Archive Archive `json:"archive"`
}

// Run layers the jars of Maven's dependency list onto the request's base image, with the
// class-data-sharing archive the training start left in trainDir if it made one, and pushes
// the kit image.
func Run(ctx context.Context, r Request, listFile, trainDir string) (Result, error) {
	arts, err := maven.ReadList(listFile)
	if err != nil {
		return Result{}, err
	}
	if err := checksum(arts); err != nil {
		return Result{}, err
	}
	return r.pushTrained(ctx, arts, trainDir)
}

// pushTrained pushes the kit image of arts with the class-data-sharing archive and classpath
// jar the training start left in trainDir, if it made one, and says why not otherwise.
func (r Request) pushTrained(ctx context.Context, arts []maven.Artifact, trainDir string) (Result, error) {
	archive, about := ReadTraining(trainDir)
	files := map[string]string{}
	if archive != "" {
		files[runtime.ArchivePath] = archive
		files[runtime.ClasspathJar] = filepath.Join(trainDir, ClasspathFile)
	}
	res, err := r.push(ctx, arts, files)
	res.Archive = about
	return res, err
}

// RunApplication layers the files of an application Maven built (a provider's Build) in dir
// onto the request's base image, under runtime.DependenciesDir as dir holds them, with the
// archive the training start left in trainDir, and pushes the kit image. A kit on a parent adds
// only the files that differ from the parent's.
func RunApplication(ctx context.Context, r Request, dir, trainDir string) (Result, error) {
	arts, err := ApplicationArtifacts(dir)
	if err != nil {
		return Result{}, err
	}
	return r.pushTrained(ctx, arts, trainDir)
}

// ApplicationArtifacts are the files under dir, each with its checksum, identified and placed
// in the image by its path under dir, sorted.
func ApplicationArtifacts(dir string) ([]maven.Artifact, error) {
	var arts []maven.Artifact
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		arts = append(arts, maven.Artifact{ID: rel, Location: runtime.DependenciesDir + "/" + rel, File: p})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the application Maven built: %w", err)
	}
	if len(arts) == 0 {
		return nil, fmt.Errorf("the application Maven built, %s, holds no file", dir)
	}
	return arts, checksum(arts)
}

// checksum fills in each artifact's sha256.
func checksum(arts []maven.Artifact) error {
	for i := range arts {
		f, err := os.Open(arts[i].File)
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

// push layers the jars that the base lacks, and files, and pushes the kit image. A parent's
// archive leaves the classpath of a camel-main kit that has none.
func (r Request) push(ctx context.Context, arts []maven.Artifact, files map[string]string) (Result, error) {
	base, added, removed := r.BaseImage, arts, []string(nil)
	if r.Parent != nil {
		parent := parentArtifacts(r.Parent)
		base, added = r.Parent.Image, missing(arts, parent)
		// A jar of the parent that Maven no longer picks (another version of a
		// transitive dependency) must leave the classpath.
		for _, p := range missing(parent, arts) {
			if !slices.ContainsFunc(added, func(a maven.Artifact) bool { return a.Location == p.Location }) {
				removed = append(removed, p.Location)
			}
		}
		if len(files) == 0 && r.Project.Build == nil {
			removed = append(removed, runtime.ArchivePath, runtime.ClasspathJar)
		}
	}
	list, err := json.Marshal(arts)
	if err != nil {
		return Result{}, err
	}
	labels := map[string]string{ArtifactsLabel: string(list)}
	for k, v := range r.Labels {
		labels[k] = v
	}
	reg := image.Registry{Address: r.RegistryAddress, Insecure: r.Insecure, Organization: r.Organization, Auth: r.Auth,
		CACertificates: r.CACertificates}
	res, err := image.AppendLayer(ctx, reg, base, jarLayer(added, files, removed),
		fmt.Sprintf("caravan: %d jars in %s", len(added), runtime.DependenciesDir), labels, r.Repository, r.Tag)
	if err != nil {
		return Result{}, err
	}
	return Result{Result: res, Artifacts: arts, Added: len(added)}, nil
}

// parentArtifacts are the jars of the parent kit, where its image holds them.
func parentArtifacts(p *build.Parent) []maven.Artifact {
	out := make([]maven.Artifact, 0, len(p.Artifacts))
	for _, a := range p.Artifacts {
		out = append(out, maven.Artifact{ID: a.ID, Location: a.Target, Checksum: a.Checksum})
	}
	return out
}

// missing returns the artifacts of arts that have is without, by ID and checksum.
func missing(arts, have []maven.Artifact) []maven.Artifact {
	var out []maven.Artifact
	for _, a := range arts {
		if !slices.ContainsFunc(have, func(h maven.Artifact) bool { return h.ID == a.ID && h.Checksum == a.Checksum }) {
			out = append(out, a)
		}
	}
	return out
}

// StatusArtifacts writes jars as a kit's status lists them, each at its Target in the image.
func StatusArtifacts(arts []maven.Artifact) []camelv1.Artifact {
	out := make([]camelv1.Artifact, 0, len(arts))
	for _, a := range arts {
		out = append(out, camelv1.Artifact{ID: a.ID, Target: a.Location, Checksum: a.Checksum})
	}
	return out
}

// ImageArtifacts returns the jars a kit image lists in its config (ArtifactsLabel).
func ImageArtifacts(img v1.Image) ([]maven.Artifact, error) {
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading the image config: %w", err)
	}
	list, ok := cfg.Config.Labels[ArtifactsLabel]
	if !ok {
		return nil, fmt.Errorf("the image config has no %s label: no builder pod made it", ArtifactsLabel)
	}
	var arts []maven.Artifact
	if err := json.Unmarshal([]byte(list), &arts); err != nil {
		return nil, fmt.Errorf("the image config's %s label: %w", ArtifactsLabel, err)
	}
	return arts, nil
}
