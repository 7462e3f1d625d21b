// Package release builds and publishes a version of Caravan in one step: the CLI's binaries with
// their checksums, the operator image and the images kits build on by digest, the Helm chart as an
// OCI artifact, the kustomize bases and the OLM bundle that name those digests, the OLM bundle and
// catalog images, and the version's section of CHANGELOG.md; it signs what it publishes, as cosign does.
package release

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/blang/semver/v4"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/caravan-dev/caravan/internal/debimage"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/operatorimage"
	"github.com/caravan-dev/caravan/internal/packaging"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// CLIPlatforms are the platforms the CLI is built for by default.
var CLIPlatforms = []v1.Platform{
	{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"},
	{OS: "darwin", Architecture: "amd64"}, {OS: "darwin", Architecture: "arm64"},
	{OS: "windows", Architecture: "amd64"}, {OS: "windows", Architecture: "arm64"},
}

// ChartRepository is where the chart goes under the release's registry: charts/caravan.
const ChartRepository = "charts"

// Options say what to release and where to publish it.
type Options struct {
	// Version is the release's version: v, then MAJOR.MINOR.PATCH, with an optional pre-release.
	Version string
	// Registry receives the images and the chart. Prefix is a repository path under it (may be empty):
	// the images go to <prefix>/caravan/operator, caravan/base, caravan/builder,
	// caravan/operator-bundle and caravan/operator-catalog, the chart to <prefix>/charts/caravan.
	Registry image.Registry
	Prefix   string
	// Source is the tree the release is built from.
	Source operatorimage.Source
	// AllowDirty releases a tree with uncommitted changes; without it such a tree is refused.
	AllowDirty bool
	// OutDir receives the files of the release; it must not exist yet.
	OutDir string
	// CLIPlatforms are the CLI's platforms (CLIPlatforms when empty); ImagePlatforms the operator
	// image's (operatorimage.Platforms when empty).
	CLIPlatforms   []v1.Platform
	ImagePlatforms []v1.Platform
	// KitImages are the images kits build on to push besides the operator (base, builder), as
	// runtime.Images names them. They are built from Debian's packages for this machine's
	// architecture.
	KitImages []string
	// CatalogBase is the image the OLM catalog image is built on, for each of ImagePlatforms:
	// OPMImage, which serves the catalog to OLM's CatalogSource. Without one, the catalog image
	// holds the catalog alone, as OLM v1's ClusterCatalog reads it.
	CatalogBase string
	// CacheDir keeps what is built between runs (the operator binaries, the Debian images).
	CacheDir string
	// Changelog is the CHANGELOG.md whose Unreleased section becomes the version's; the one at the
	// root of Source when empty.
	Changelog string
	// Now dates the CHANGELOG section.
	Now time.Time
	// Progress receives what is being done.
	Progress io.Writer
	// SigningKey signs the images, the chart and the CLI's checksums (LoadSigningKey reads one);
	// a release without one is refused unless Unsigned.
	SigningKey signature.SignerVerifier
	// Unsigned makes a release without signatures, for a rehearsal; its notes say so.
	Unsigned bool
}

// Result is what a release published and wrote.
type Result struct {
	// Operator is the operator image by digest.
	Operator string
	// KitImages are the images kits build on by digest, by name (base, builder).
	KitImages map[string]string
	// Chart is the chart's OCI reference by digest.
	Chart string
	// Bundle and Catalog are the OLM bundle and catalog images by digest.
	Bundle, Catalog string
	// Signatures are the signatures' references, by the reference of what each signs; none when unsigned.
	Signatures map[string]string
	// Attestations are the signed provenances' references, by the reference of what each is of;
	// none when unsigned.
	Attestations map[string]string
	// Files are the files written under OutDir, by path relative to it.
	Files []string
	// Notes is the release notes: the CHANGELOG section and where everything is.
	Notes string
}

// Run checks the options, then builds and publishes the release. It refuses bad options before
// building anything, and edits CHANGELOG.md only once everything is published.
func Run(ctx context.Context, o Options) (Result, error) {
	started := time.Now()
	v, err := ParseVersion(o.Version)
	if err != nil {
		return Result{}, err
	}
	if err := o.check(); err != nil {
		return Result{}, err
	}
	changelogPath := o.changelogPath()
	changelog, err := os.ReadFile(changelogPath)
	if err != nil {
		return Result{}, fmt.Errorf("reading the changelog: %w", err)
	}
	section, err := unreleased(string(changelog))
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", changelogPath, err)
	}
	// The OLM catalog of the previous release names the release this one's bundle replaces.
	catalog, err := previousCatalog(ctx, o)
	if err != nil {
		return Result{}, err
	}
	replaces, err := replacedRelease(catalog, v)
	if err != nil {
		return Result{}, err
	}
	if err := os.MkdirAll(filepath.Dir(o.OutDir), 0o755); err != nil {
		return Result{}, err
	}
	if err := os.Mkdir(o.OutDir, 0o755); err != nil {
		return Result{}, fmt.Errorf("the release's directory: %w (remove it, or choose another)", err)
	}
	res := Result{KitImages: map[string]string{}}
	step := func(format string, args ...any) { fmt.Fprintf(o.Progress, "==> "+format+"\n", args...) }

	step("pushing the operator image for %s", platformList(o.ImagePlatforms))
	op, boms, err := pushOperator(ctx, o)
	if err != nil {
		return Result{}, err
	}
	res.Operator = op
	res.Files = append(res.Files, boms...)

	step("building the CLI for %s", platformList(o.cliPlatforms()))
	cli, err := buildCLI(ctx, o, res.Operator)
	if err != nil {
		return Result{}, err
	}
	res.Files = append(res.Files, cli...)

	for _, name := range o.KitImages {
		step("pushing the %s image", name)
		ref, digest, err := debimage.Push(ctx, o.CacheDir, *runtime.ImageNamed(name), o.Registry, path.Join(o.Registry.Address, o.Prefix), o.Progress)
		if err != nil {
			return Result{}, fmt.Errorf("the %s image: %w", name, err)
		}
		// The repository carries a tag: the last colon starts it.
		res.KitImages[name] = ref[:strings.LastIndex(ref, ":")] + "@" + digest.String()
		bom, err := kitImageSBOM(ctx, o, name, res.KitImages[name])
		if err != nil {
			return Result{}, fmt.Errorf("the bill of materials of the %s image: %w", name, err)
		}
		res.Files = append(res.Files, bom)
	}

	step("packaging the chart and pushing it")
	chartFile, chartRef, err := publishChart(o, v, res.Operator)
	if err != nil {
		return Result{}, err
	}
	res.Files = append(res.Files, chartFile)
	res.Chart = chartRef

	step("writing the kustomize bases and the OLM bundle")
	files, err := packaging.Generated(packaging.Release{Version: o.Version, Image: res.Operator, Replaces: replaces})
	if err != nil {
		return Result{}, err
	}
	manifests, err := writeManifests(o, files)
	if err != nil {
		return Result{}, err
	}
	res.Files = append(res.Files, manifests...)

	step("pushing the OLM bundle and catalog images")
	olm, err := publishOLM(ctx, o, files, catalog)
	if err != nil {
		return Result{}, err
	}
	res.Bundle, res.Catalog = olm.Bundle, olm.Catalog
	res.Files = append(res.Files, olm.Files...)

	if !o.Unsigned {
		step("signing the images, the chart and the CLI's checksums")
		signatures, err := signRelease(ctx, o, &res)
		if err != nil {
			return Result{}, err
		}
		res.Files = append(res.Files, signatures...)
		step("attaching the signed provenance of each image and the chart, writing the CLI's")
		prov, err := attestRelease(ctx, o, &res, started)
		if err != nil {
			return Result{}, err
		}
		res.Files = append(res.Files, prov)
	}

	res.Notes = notes(o, v, section, res)
	if err := os.WriteFile(filepath.Join(o.OutDir, "RELEASE.md"), []byte(res.Notes), 0o644); err != nil {
		return Result{}, err
	}
	res.Files = append(res.Files, "RELEASE.md")
	sort.Strings(res.Files)

	step("adding the %s section to %s", o.Version, changelogPath)
	dated, err := release(string(changelog), o.Version, o.Now)
	if err != nil {
		return Result{}, err
	}
	if err := os.WriteFile(changelogPath, []byte(dated), 0o644); err != nil {
		return Result{}, fmt.Errorf("writing the changelog: %w", err)
	}
	return res, nil
}

// pushOperator builds and pushes the operator image, and writes the bill of materials of each
// platform's binary; it returns the image by digest and the files written.
func pushOperator(ctx context.Context, o Options) (string, []string, error) {
	src := o.Source
	src.Version = o.Version
	op, err := operatorimage.BuildAndPush(ctx, operatorimage.Options{Source: src, Platforms: o.ImagePlatforms,
		Registry: o.Registry, Repository: path.Join(o.Prefix, operatorimage.Repository), Tag: o.Version,
		BinDir: operatorimage.DefaultBinDir(o.CacheDir), Progress: o.Progress})
	if err != nil {
		return "", nil, fmt.Errorf("the operator image: %w", err)
	}
	var files []string
	for _, p := range o.imagePlatforms() {
		bom, err := writeSBOM(o.OutDir, op.Binaries[p.String()], OperatorProgram, o.Version, p, o.Now)
		if err != nil {
			return "", nil, fmt.Errorf("the operator's bill of materials for %s: %w", p.String(), err)
		}
		img, err := image.PullPlatform(ctx, o.Registry, op.Reference, p)
		if err != nil {
			return "", nil, fmt.Errorf("the operator image for %s: %w", p.String(), err)
		}
		digest, err := img.Digest()
		if err != nil {
			return "", nil, err
		}
		if err := attachSBOM(ctx, o, repositoryOf(op.Reference)+"@"+digest.String(), bom); err != nil {
			return "", nil, fmt.Errorf("the operator's bill of materials for %s: %w", p.String(), err)
		}
		files = append(files, bom)
	}
	return op.Reference, files, nil
}

// attachSBOM pushes the bill of materials file, of OutDir, as an artifact referring to the image
// ref (by digest), which `oras discover` lists.
func attachSBOM(ctx context.Context, o Options, ref, file string) error {
	data, err := os.ReadFile(filepath.Join(o.OutDir, file))
	if err != nil {
		return err
	}
	_, err = image.AttachArtifact(ctx, o.Registry, ref, image.CycloneDXType, file, data)
	return err
}

// repositoryOf is the repository of ref, REPOSITORY@sha256:....
func repositoryOf(ref string) string {
	repo, _, _ := strings.Cut(ref, "@")
	return repo
}

// kitImageSBOM writes the bill of materials of the image kits build on named name, pushed as ref,
// from the Debian packages it holds, and attaches it to the image.
func kitImageSBOM(ctx context.Context, o Options, name, ref string) (string, error) {
	img, err := image.Pull(ctx, o.Registry, ref)
	if err != nil {
		return "", err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return "", err
	}
	bom, err := writeDebianSBOM(o.OutDir, img, name, o.Version, v1.Platform{OS: cfg.OS, Architecture: cfg.Architecture}, o.Now)
	if err != nil {
		return "", err
	}
	return bom, attachSBOM(ctx, o, ref, bom)
}

// ParseVersion parses a release version: v, then a semantic version.
func ParseVersion(version string) (semver.Version, error) {
	rest, ok := strings.CutPrefix(version, "v")
	if !ok {
		return semver.Version{}, fmt.Errorf("version %q: a release version starts with v, as v1.2.3", version)
	}
	v, err := semver.Parse(rest)
	if err != nil {
		return semver.Version{}, fmt.Errorf("version %q is not v followed by a semantic version, as v1.2.3 or v1.2.3-rc.1: %w", version, err)
	}
	if len(v.Build) > 0 {
		return semver.Version{}, fmt.Errorf("version %q: no build metadata (+...); a tag of the images cannot hold a +", version)
	}
	return v, nil
}

// check refuses options a release cannot be made of, before anything is built.
func (o Options) check() error {
	var errs []error
	if o.Registry.Address == "" {
		errs = append(errs, errors.New("no registry to publish to"))
	}
	if o.OutDir == "" {
		errs = append(errs, errors.New("no directory for the release's files"))
	}
	if o.Source.Dir == "" {
		errs = append(errs, errors.New("no source tree"))
	}
	if o.SigningKey == nil && !o.Unsigned {
		errs = append(errs, errors.New("no signing key: give one (an ECDSA P-256 key, as cosign generate-key-pair makes), or make an unsigned rehearsal"))
	}
	if strings.HasSuffix(o.Source.Revision, "-dirty") && !o.AllowDirty {
		errs = append(errs, fmt.Errorf("the source tree %s has uncommitted changes: commit them, so that the release is built from a commit", o.Source.Dir))
	}
	for _, p := range o.cliPlatforms() {
		if p.OS != "linux" && p.OS != "darwin" && p.OS != "windows" {
			errs = append(errs, fmt.Errorf("CLI platform %s: the CLI is built for linux, darwin and windows", p.String()))
		}
	}
	for _, name := range o.KitImages {
		if runtime.ImageNamed(name) == nil {
			errs = append(errs, fmt.Errorf("%q is not an image kits build on: give base or builder", name))
		}
	}
	return errors.Join(errs...)
}

func (o Options) cliPlatforms() []v1.Platform {
	if len(o.CLIPlatforms) == 0 {
		return CLIPlatforms
	}
	return o.CLIPlatforms
}

func (o Options) changelogPath() string {
	if o.Changelog != "" {
		return o.Changelog
	}
	return filepath.Join(o.Source.Dir, "CHANGELOG.md")
}

// platformList names the platforms, or the operator image's default ones when there are none.
func platformList(ps []v1.Platform) string {
	if len(ps) == 0 {
		ps = operatorimage.Platforms
	}
	return strings.Join(operatorimage.PlatformNames(ps), ", ")
}

// writeManifests writes, of the generated files, the kustomize bases, the monitoring objects, the
// OLM bundle and the admission policies for OLM, under the paths they have in the source tree.
func writeManifests(o Options, files map[string][]byte) ([]string, error) {
	var written []string
	for p, data := range files {
		if !strings.HasPrefix(p, packaging.KustomizeDir+"/") && !strings.HasPrefix(p, packaging.BundleDir+"/") &&
			!strings.HasPrefix(p, packaging.MonitoringDir+"/") && !strings.HasPrefix(p, packaging.OLMAdmissionDir+"/") {
			continue
		}
		dst := filepath.Join(o.OutDir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return nil, err
		}
		written = append(written, p)
	}
	return written, nil
}

// notes are the release notes: the changelog section, then what was published and how to install it.
func notes(o Options, v semver.Version, section string, res Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Caravan %s\n\n", o.Version)
	if o.Source.Revision != "" {
		fmt.Fprintf(&b, "Built from commit %s.\n\n", o.Source.Revision)
	}
	fmt.Fprintf(&b, "%s\n\n## Published\n\n", strings.TrimSpace(section))
	fmt.Fprintf(&b, "- Operator image: `%s`\n", res.Operator)
	for _, n := range sortedKeys(res.KitImages) {
		fmt.Fprintf(&b, "- Image kits build on (%s): `%s`\n", n, res.KitImages[n])
	}
	fmt.Fprintf(&b, "- Helm chart: `oci://%s`\n", res.Chart)
	fmt.Fprintf(&b, "- CLI: `caravan-%s-<os>-<arch>.tar.gz` (`.zip` for windows) for %s, with `SHA256SUMS`\n", o.Version, platformList(o.cliPlatforms()))
	fmt.Fprintf(&b, "- Bills of materials (CycloneDX, the Go modules each binary was built with): `%s` for the CLI, `%s` for the operator image\n",
		SBOMName(CLIProgram, o.Version, v1.Platform{OS: "<os>", Architecture: "<arch>"}), SBOMName(OperatorProgram, o.Version, v1.Platform{OS: "<os>", Architecture: "<arch>"}))
	fmt.Fprintf(&b, "- Each image carries its bill of materials as an artifact that refers to it: `oras discover --artifact-type %s IMAGE@DIGEST` lists it, `oras pull` fetches it\n", image.CycloneDXType)
	fmt.Fprintf(&b, "- kustomize bases and the OLM bundle: `%s/` and `%s/`\n", packaging.KustomizeDir, packaging.BundleDir)
	fmt.Fprintf(&b, "- OLM bundle image: `%s`\n", res.Bundle)
	fmt.Fprintf(&b, "- OLM catalog image (channel %s, every release so far): `%s`, also tagged `%s`; the catalog: `%s`\n",
		packaging.OLMChannel, res.Catalog, CatalogTag, path.Join(packaging.CatalogDir, packaging.CatalogFile))
	fmt.Fprintf(&b, "- Admission policies for an operator OLM installs: `%s/`\n", packaging.OLMAdmissionDir)
	chart, _, _ := strings.Cut(res.Chart, "@")
	chart, _, _ = strings.Cut(chart, ":")
	fmt.Fprintf(&b, "\n## Install\n\n```sh\n")
	fmt.Fprintf(&b, "helm install camel-k oci://%s --version %s -n camel-k --create-namespace\n", chart, v.String())
	fmt.Fprintf(&b, "kubectl apply --server-side -k %s/base\n", packaging.KustomizeDir)
	fmt.Fprintf(&b, "caravan install -n camel-k -x camel-k --image %s\n```\n", res.Operator)
	verifyNotes(&b, o.Version, res)
	return b.String()
}

// verifyNotes says how to verify the signatures and provenance of the release of version, or that it has none.
func verifyNotes(b *strings.Builder, version string, res Result) {
	if len(res.Signatures) == 0 {
		fmt.Fprintf(b, "\n## Verify\n\nThis release is unsigned: it is a rehearsal, not one to install.\n")
		return
	}
	fmt.Fprintf(b, "\n## Verify\n\nEach image and the chart are signed by digest with the key of `%s`, in cosign's format:\n\n```sh\n", PublicKeyFile)
	for _, ref := range res.signed() {
		fmt.Fprintf(b, "cosign verify --key %s --insecure-ignore-tlog=true %s\n", PublicKeyFile, ref)
	}
	fmt.Fprintf(b, "```\n\nThe CLI's archives are in `%s`, which `%s` signs:\n\n```sh\n", ChecksumsFile, ChecksumsSignatureFile)
	fmt.Fprintf(b, "cosign verify-blob --key %s --signature %s --insecure-ignore-tlog=true %s\n", PublicKeyFile, ChecksumsSignatureFile, ChecksumsFile)
	fmt.Fprintf(b, "# or, without cosign:\nbase64 -d %s > %s.der && openssl dgst -sha256 -verify %s -signature %s.der %s\n",
		ChecksumsSignatureFile, ChecksumsFile, PublicKeyFile, ChecksumsFile, ChecksumsFile)
	fmt.Fprintf(b, "sha256sum -c %s\n```\n", ChecksumsFile)
	fmt.Fprintf(b, "\nEach of them carries a signed SLSA provenance (how and from which commit it was built); the archives' is `%s`:\n\n```sh\n", ProvenanceName(version))
	for _, ref := range res.signed() {
		fmt.Fprintf(b, "cosign verify-attestation --key %s --insecure-ignore-tlog=true --type slsaprovenance1 %s\n", PublicKeyFile, ref)
	}
	fmt.Fprintf(b, "cosign verify-blob-attestation --key %s --insecure-ignore-tlog=true --type slsaprovenance1 --signature %s ARCHIVE\n```\n",
		PublicKeyFile, ProvenanceName(version))
}

// sortedKeys are m's keys, sorted.
func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
