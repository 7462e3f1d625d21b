package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	. "github.com/onsi/gomega"
	"helm.sh/helm/v3/pkg/chart/loader"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"

	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/image/imagetest"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/operatorimage"
	"github.com/caravan-dev/caravan/internal/packaging"
)

const testChangelog = "# Changelog\n\n## Unreleased\n\n- Moves keep their pods.\n\n## v0.0.1 - 2026-11-01\n\n- First.\n"

func TestAReleasePublishesEverythingByDigest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI for two platforms and the operator image")
	}
	ctx := context.Background()
	reg := imagetest.StartRegistry(t)
	src, err := operatorimage.FindSource(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	cacheDir, err := localcluster.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	changelog := filepath.Join(t.TempDir(), "CHANGELOG.md")
	if err := os.WriteFile(changelog, []byte(testChangelog), 0o644); err != nil {
		t.Fatal(err)
	}
	host := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	other := v1.Platform{OS: "darwin", Architecture: "arm64"}
	windows := v1.Platform{OS: "windows", Architecture: "amd64"}
	out := filepath.Join(t.TempDir(), "v0.1.0-rc.1")
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	res, err := Run(ctx, Options{Version: "v0.1.0-rc.1", Registry: reg.Config(), Prefix: "team",
		Source: src, AllowDirty: true, OutDir: out,
		CLIPlatforms: []v1.Platform{host, other, windows}, ImagePlatforms: []v1.Platform{host}, KitImages: []string{"base"},
		CacheDir: cacheDir, Changelog: changelog, Now: now, Progress: &testWriter{t}, SigningKey: testSigningKey(t)})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("every image and the chart are signed by digest in cosign's format, and SHA256SUMS too, with the published key", func(t *testing.T) {
		checkSignatures(t, reg.Config(), out, res)
	})

	t.Run("every image and the chart carry a signed provenance of their digest, and the CLI's archives have theirs", func(t *testing.T) {
		checkProvenance(t, reg.Config(), out, "v0.1.0-rc.1", src.Revision, res)
	})

	t.Run("the CLI's archives match their checksums and the binary is of the version", func(t *testing.T) {
		sums, err := os.ReadFile(filepath.Join(out, ChecksumsFile))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(sums)), "\n")
		if len(lines) != 3 {
			t.Fatalf("%s = %q, want a line for each of the 3 platforms", ChecksumsFile, sums)
		}
		for _, line := range lines {
			sum, name, ok := strings.Cut(line, "  ")
			data, err := os.ReadFile(filepath.Join(out, name))
			if !ok || err != nil {
				t.Fatalf("%s line %q names no archive of the release: %v", ChecksumsFile, line, err)
			}
			if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
				t.Errorf("%s: SHA-256 %x, %s says %s", name, got, ChecksumsFile, sum)
			}
		}
		bin := extract(t, filepath.Join(out, ArchiveName("v0.1.0-rc.1", host)), "caravan")
		got, err := exec.Command(bin, "version", "--client").CombinedOutput()
		if err != nil || !strings.Contains(string(got), "v0.1.0-rc.1") {
			t.Errorf("caravan version --client = %q, %v; want v0.1.0-rc.1", got, err)
		}
		help, err := exec.Command(bin, "install", "--help").CombinedOutput()
		if err != nil || !strings.Contains(string(help), "--image='"+res.Operator+"'") {
			t.Errorf("the released CLI does not install the release's operator image by digest by default:\n%s%v", help, err)
		}
		checkWindowsArchive(t, filepath.Join(out, ArchiveName("v0.1.0-rc.1", windows)))
		darwin := extract(t, filepath.Join(out, ArchiveName("v0.1.0-rc.1", other)), "caravan")
		if data, err := os.ReadFile(darwin); err != nil || !bytes.HasPrefix(data, []byte{0xcf, 0xfa, 0xed, 0xfe}) {
			t.Errorf("the darwin archive's binary is not a 64-bit Mach-O executable: %v", err)
		}
	})

	t.Run("each CLI archive and each operator image has a bill of materials of the modules its binary was built with", func(t *testing.T) {
		checkBillsOfMaterials(t, out, res.Files, map[string][]v1.Platform{CLIProgram: {host, other, windows}, OperatorProgram: {host}})
	})

	t.Run("the image kits build on has a bill of materials of the Debian packages it holds", func(t *testing.T) {
		name := SBOMName("caravan-base", "v0.1.0-rc.1", host)
		if !slices.Contains(res.Files, name) {
			t.Fatalf("no %s among %v", name, res.Files)
		}
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		bom := decodeSBOM(t, data)
		NewWithT(t).Expect(*bom.Components).To(ContainElement(And(HaveField("Name", "openjdk-17-jre-headless"),
			HaveField("PackageURL", MatchRegexp(`^pkg:deb/debian/openjdk-17-jre-headless@\S+\?arch=`+runtime.GOARCH+`$`)))))
	})

	t.Run("each image's bill of materials is attached to it, as an artifact that refers to it", func(t *testing.T) {
		opImage, err := image.PullPlatform(ctx, reg.Config(), res.Operator, host)
		if err != nil {
			t.Fatal(err)
		}
		opDigest, err := opImage.Digest()
		if err != nil {
			t.Fatal(err)
		}
		opRepo, _, _ := strings.Cut(res.Operator, "@")
		for ref, file := range map[string]string{
			opRepo + "@" + opDigest.String(): SBOMName(OperatorProgram, "v0.1.0-rc.1", host),
			res.KitImages["base"]:            SBOMName("caravan-base", "v0.1.0-rc.1", host),
		} {
			want, err := os.ReadFile(filepath.Join(out, file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := image.ReadArtifacts(ctx, reg.Config(), ref, image.CycloneDXType)
			if err != nil {
				t.Fatalf("the referrers of %s: %v", ref, err)
			}
			if len(got) != 1 || !bytes.Equal(got[file], want) {
				t.Errorf("%s refers to the files %v, want %s as the release wrote it", ref, slices.Collect(maps.Keys(got)), file)
			}
		}
	})

	t.Run("the images are in the registry by digest", func(t *testing.T) {
		want := reg.Address + "/team/caravan/operator@sha256:"
		if !strings.HasPrefix(res.Operator, want) {
			t.Errorf("operator image %s, want %s…", res.Operator, want)
		}
		if !strings.HasPrefix(res.KitImages["base"], reg.Address+"/team/caravan/base@sha256:") {
			t.Errorf("base image %q, want it under %s/team by digest", res.KitImages["base"], reg.Address)
		}
		for _, ref := range []string{res.Operator, res.KitImages["base"]} {
			if _, err := image.Pull(ctx, reg.Config(), ref); err != nil {
				t.Errorf("pulling %s: %v", ref, err)
			}
		}
	})

	t.Run("the chart pulled from the registry is of the version and runs the operator image by digest", func(t *testing.T) {
		client, err := ChartClient(reg.Config())
		if err != nil {
			t.Fatal(err)
		}
		pulled, err := client.Pull(reg.Address + "/team/charts/caravan:0.1.0-rc.1")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(res.Chart, "@"+pulled.Manifest.Digest) {
			t.Errorf("chart %s, but the registry serves the tag at digest %s", res.Chart, pulled.Manifest.Digest)
		}
		ch, err := loader.LoadArchive(bytes.NewReader(pulled.Chart.Data))
		if err != nil {
			t.Fatal(err)
		}
		if ch.Metadata.Version != "0.1.0-rc.1" || ch.Metadata.AppVersion != "v0.1.0-rc.1" {
			t.Errorf("chart version %s, appVersion %s; want 0.1.0-rc.1 and v0.1.0-rc.1", ch.Metadata.Version, ch.Metadata.AppVersion)
		}
		if img, _ := ch.Values["image"].(map[string]any); fmt.Sprintf("%v@%v", img["repository"], img["digest"]) != res.Operator {
			t.Errorf("the chart's image value is %v, want %s", ch.Values["image"], res.Operator)
		}
	})

	t.Run("the kustomize base and the OLM bundle run the operator image by digest", func(t *testing.T) {
		k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
		m, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(out, packaging.KustomizeDir, "base"))
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, r := range m.Resources() {
			if r.GetKind() != "Deployment" {
				continue
			}
			data, err := r.AsYAML()
			if err != nil {
				t.Fatal(err)
			}
			d := &appsv1.Deployment{}
			if err := yaml.Unmarshal(data, d); err != nil {
				t.Fatal(err)
			}
			found++
			if got := d.Spec.Template.Spec.Containers[0].Image; got != res.Operator {
				t.Errorf("Deployment %s runs %s, want %s", d.Name, got, res.Operator)
			}
		}
		if found != 1 {
			t.Errorf("the kustomize base has %d Deployments, want 1", found)
		}
		data, err := os.ReadFile(filepath.Join(out, packaging.BundleDir, "manifests", "caravan.clusterserviceversion.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		csv := &operatorsv1alpha1.ClusterServiceVersion{}
		if err := yaml.Unmarshal(data, csv); err != nil {
			t.Fatal(err)
		}
		if csv.Spec.Version.String() != "0.1.0-rc.1" {
			t.Errorf("CSV version %s, want 0.1.0-rc.1", csv.Spec.Version.String())
		}
		deployments := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs
		if len(deployments) != 1 || deployments[0].Spec.Template.Spec.Containers[0].Image != res.Operator {
			t.Errorf("the CSV's Deployments %+v, want one of %s", deployments, res.Operator)
		}
		if len(csv.Spec.RelatedImages) != 1 || csv.Spec.RelatedImages[0].Image != res.Operator {
			t.Errorf("the CSV's related images %+v, want the operator image by digest", csv.Spec.RelatedImages)
		}
	})

	t.Run("the OLM bundle and catalog images are in the registry by digest", func(t *testing.T) {
		for _, want := range []struct{ ref, repo string }{{res.Bundle, BundleRepository}, {res.Catalog, CatalogRepository}} {
			if !strings.HasPrefix(want.ref, reg.Address+"/team/"+want.repo+"@sha256:") {
				t.Errorf("image %q, want it in %s/team/%s by digest", want.ref, reg.Address, want.repo)
			}
			if _, err := image.PullPlatform(ctx, reg.Config(), want.ref, host); err != nil {
				t.Errorf("pulling %s: %v", want.ref, err)
			}
		}
		catalog, err := os.ReadFile(filepath.Join(out, packaging.CatalogDir, packaging.CatalogFile))
		if err != nil || !strings.Contains(string(catalog), "image: "+res.Bundle+"\n") {
			t.Errorf("the release's OLM catalog does not name its bundle %s: %v\n%s", res.Bundle, err, catalog)
		}
	})

	t.Run("the changelog has the version's section and the notes tell it", func(t *testing.T) {
		data, err := os.ReadFile(changelog)
		if err != nil {
			t.Fatal(err)
		}
		want := "# Changelog\n\n## Unreleased\n\n## v0.1.0-rc.1 - 2026-12-05\n\n- Moves keep their pods.\n\n## v0.0.1 - 2026-11-01\n\n- First.\n"
		if string(data) != want {
			t.Errorf("CHANGELOG.md =\n%s\nwant\n%s", data, want)
		}
		for _, s := range []string{"- Moves keep their pods.", res.Operator, res.KitImages["base"], res.Chart,
			"cosign verify --key cosign.pub --insecure-ignore-tlog=true " + res.Operator, "openssl dgst -sha256 -verify cosign.pub",
			"cosign verify-attestation --key cosign.pub --insecure-ignore-tlog=true --type slsaprovenance1 " + res.Operator,
			"--signature " + ProvenanceName("v0.1.0-rc.1")} {
			if !strings.Contains(res.Notes, s) {
				t.Errorf("the release notes do not say %q:\n%s", s, res.Notes)
			}
		}
	})
}

func TestAReleaseIsRefusedBeforeAnythingIsBuilt(t *testing.T) {
	for _, tc := range []struct {
		name, version, changelog, revision string
		kitImages                          []string
		want                               string
	}{
		{"a version without v", "1.2.3", testChangelog, "abc", nil, "starts with v"},
		{"a version that is not semantic", "v1.2", testChangelog, "abc", nil, "not v followed by a semantic version"},
		{"build metadata", "v1.2.3+build.1", testChangelog, "abc", nil, "no build metadata"},
		{"no Unreleased section", "v1.2.3", "# Changelog\n\n## v0.0.1\n", "abc", nil, `no "## Unreleased" heading`},
		{"an empty Unreleased section", "v1.2.3", "## Unreleased\n\n## v0.0.1\n\n- First.\n", "abc", nil, "section is empty"},
		{"uncommitted changes", "v1.2.3", testChangelog, "abc-dirty", nil, "has uncommitted changes"},
		{"an unknown kit image", "v1.2.3", testChangelog, "abc", []string{"runtime"}, `"runtime" is not an image kits build on`},
		{"no signing key", "v1.2.3", testChangelog, "abc", nil, "no signing key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			changelog := filepath.Join(dir, "CHANGELOG.md")
			if err := os.WriteFile(changelog, []byte(tc.changelog), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "dist")
			_, err := Run(context.Background(), Options{Version: tc.version, Registry: image.Registry{Address: "127.0.0.1:1"},
				Source: operatorimage.Source{Dir: dir, Revision: tc.revision}, OutDir: out, KitImages: tc.kitImages,
				Changelog: changelog, Progress: io.Discard, Unsigned: tc.want != "no signing key"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run = %v, want an error saying %q", err, tc.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("the refused release made %s", out)
			}
			if data, _ := os.ReadFile(changelog); string(data) != tc.changelog {
				t.Errorf("the refused release changed CHANGELOG.md to %q", data)
			}
		})
	}
}

func TestTheUnreleasedSectionBecomesTheVersions(t *testing.T) {
	crlf := "## Unreleased\r\n\r\n- One.\r\n"
	got, err := release(crlf, "v1.0.0", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if want := "## Unreleased\n\n## v1.0.0 - 2026-01-02\n\r\n- One.\r\n"; got != want {
		t.Errorf("release = %q, want %q", got, want)
	}
	section, err := unreleased("intro\n## Unreleased\n- A.\n- B.\n## v0.1.0\n- C.\n")
	if err != nil || section != "- A.\n- B." {
		t.Errorf("unreleased = %q, %v; want the two lines of the section", section, err)
	}
}

// extract writes the file name of the gzipped tar archive to a temporary directory and returns its path.
func extract(t *testing.T, archive, name string) string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s has no %s: %v", archive, name, err)
		}
		if h.Name != name {
			continue
		}
		dst := filepath.Join(t.TempDir(), name)
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, os.FileMode(h.Mode)); err != nil {
			t.Fatal(err)
		}
		return dst
	}
}

// testWriter writes progress lines to the test's log.
type testWriter struct{ t *testing.T }

func (w *testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestTheChartsDefaultImageIsTheReleasesByDigest: the packaged chart's values, in values.yaml and
// as loaded, name the release's image by repository and digest, and keep values.yaml's comments.
func TestTheChartsDefaultImageIsTheReleasesByDigest(t *testing.T) {
	ch, err := packaging.LoadChart(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	operator := "registry.example:5000/team/caravan/operator@sha256:" + strings.Repeat("0a", 32)
	if err := pinImage(ch, operator); err != nil {
		t.Fatal(err)
	}
	img, _ := ch.Values["image"].(map[string]any)
	if img["repository"] != "registry.example:5000/team/caravan/operator" || img["digest"] != "sha256:"+strings.Repeat("0a", 32) || img["tag"] != "" {
		t.Errorf("the chart's image value is %v, want the repository and digest of %s", img, operator)
	}
	for _, f := range ch.Raw {
		if f.Name == "values.yaml" && (!strings.Contains(string(f.Data), "\n  digest: \"sha256:"+strings.Repeat("0a", 32)+"\"\n") ||
			!strings.Contains(string(f.Data), "# The image's repository")) {
			t.Errorf("values.yaml does not pin the image with its comments:\n%s", f.Data)
		}
	}
}

// checkWindowsArchive checks that the zip at path holds caravan.exe, a Windows executable.
func checkWindowsArchive(t *testing.T, path string) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatalf("the windows archive is no zip: %v", err)
	}
	defer zr.Close()
	exe, err := zr.Open("caravan.exe")
	if err != nil {
		t.Fatalf("the windows archive holds no caravan.exe: %v", err)
	}
	head := make([]byte, 2)
	if _, err := io.ReadFull(exe, head); err != nil || string(head) != "MZ" {
		t.Errorf("the windows archive's caravan.exe is not a Windows executable: %q, %v", head, err)
	}
}

// checkBillsOfMaterials checks that the release in out lists and holds a bill of materials for each
// program's platforms, naming it, its version and platform, and cobra at go.mod's version.
func checkBillsOfMaterials(t *testing.T, out string, files []string, programs map[string][]v1.Platform) {
	t.Helper()
	g := NewWithT(t)
	cobra := cobraVersion(t)
	for program, platforms := range programs {
		for _, p := range platforms {
			name := SBOMName(program, "v0.1.0-rc.1", p)
			g.Expect(files).To(ContainElement(name))
			data, err := os.ReadFile(filepath.Join(out, name))
			g.Expect(err).NotTo(HaveOccurred())
			bom := decodeSBOM(t, data)
			g.Expect(bom.Metadata.Component).To(HaveValue(And(HaveField("Name", program), HaveField("Version", "v0.1.0-rc.1"),
				HaveField("PackageURL", HaveSuffix("?goos="+p.OS+"&goarch="+p.Architecture)))), name)
			g.Expect(*bom.Components).To(ContainElement(And(HaveField("Name", "github.com/spf13/cobra"), HaveField("Version", cobra))), name)
		}
	}
}

// cobraVersion is the version of github.com/spf13/cobra that go.mod requires.
func cobraVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s+github\.com/spf13/cobra (v\S+)`).FindSubmatch(data)
	if m == nil {
		t.Fatal("go.mod requires no github.com/spf13/cobra")
	}
	return string(m[1])
}
