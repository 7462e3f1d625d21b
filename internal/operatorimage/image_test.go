package operatorimage

import (
	"archive/tar"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	. "github.com/onsi/gomega"

	"github.com/caravan-dev/caravan/internal/install"
)

// fakeBinary writes a stand-in for the caravan binary and returns its path.
func fakeBinary(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "caravan")
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// files lists the flattened filesystem of img: path -> header.
func files(t *testing.T, img v1.Image) (map[string]*tar.Header, map[string][]byte) {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	hdrs, contents := map[string]*tar.Header{}, map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n := strings.TrimSuffix(h.Name, "/")
		hdrs[n] = h
		data, _ := io.ReadAll(tr)
		contents[n] = data
	}
	return hdrs, contents
}

var amd64 = v1.Platform{OS: "linux", Architecture: "amd64"}

func TestTheImageRunsTheBinaryAsTheNonRootUserWithItsLabels(t *testing.T) {
	g := NewWithT(t)
	src := Source{Version: "v1.2.3", Revision: "abc123"}
	img, err := Image(fakeBinary(t, "binary"), amd64, src, []byte("CA"))
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := img.ConfigFile()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Config.User).To(Equal("65532:65532"))
	g.Expect(cfg.Config.Entrypoint).To(Equal([]string{"/caravan"}))
	g.Expect(cfg.Config.Labels).To(HaveKeyWithValue(LabelVersion, "v1.2.3"))
	g.Expect(cfg.Config.Labels).To(HaveKeyWithValue(LabelRevision, "abc123"))
	g.Expect(cfg.Config.Labels).To(HaveKeyWithValue(LabelSource, "https://"+ModulePath))
	g.Expect(cfg.OS).To(Equal("linux"))
	g.Expect(cfg.Architecture).To(Equal("amd64"))
	mt, err := img.MediaType()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(mt).To(Equal(types.OCIManifestSchema1))
}

func TestTheImageHoldsAMinimalRootFilesystem(t *testing.T) {
	g := NewWithT(t)
	img, err := Image(fakeBinary(t, "binary"), amd64, Source{}, []byte("CA bundle"))
	g.Expect(err).NotTo(HaveOccurred())
	hdrs, contents := files(t, img)
	g.Expect(hdrs).To(HaveKey("caravan"))
	g.Expect(hdrs["caravan"].Mode&0o111).NotTo(BeZero(), "the binary is not executable")
	g.Expect(string(contents["caravan"])).To(Equal("binary"))
	g.Expect(string(contents["etc/ssl/certs/ca-certificates.crt"])).To(Equal("CA bundle"))
	g.Expect(string(contents["etc/passwd"])).To(ContainSubstring("nonroot:x:65532:65532:"))
	g.Expect(hdrs["tmp"].Mode & 0o1777).To(Equal(int64(0o1777)))
	g.Expect(hdrs["home/nonroot"].Uid).To(Equal(UID))
	for name := range hdrs {
		g.Expect(name).To(BeElementOf("caravan", "etc", "etc/group", "etc/passwd", "etc/ssl", "etc/ssl/certs",
			"etc/ssl/certs/ca-certificates.crt", "home", "home/nonroot", "tmp"), "unexpected file in the image")
	}
}

func TestTheSameBinaryGivesTheSameDigestAndAnotherBinaryAnother(t *testing.T) {
	g := NewWithT(t)
	digest := func(content string) v1.Hash {
		img, err := Image(fakeBinary(t, content), amd64, Source{Version: "v1"}, []byte("CA"))
		g.Expect(err).NotTo(HaveOccurred())
		d, err := img.Digest()
		g.Expect(err).NotTo(HaveOccurred())
		return d
	}
	g.Expect(digest("one")).To(Equal(digest("one")))
	g.Expect(digest("one")).NotTo(Equal(digest("two")))
}

func TestTheIndexNamesEachPlatform(t *testing.T) {
	g := NewWithT(t)
	images := map[string]v1.Image{}
	for _, p := range Platforms {
		img, err := Image(fakeBinary(t, p.Architecture), p, Source{}, []byte("CA"))
		g.Expect(err).NotTo(HaveOccurred())
		images[p.String()] = img
	}
	idx, err := Index(images, Platforms)
	g.Expect(err).NotTo(HaveOccurred())
	m, err := idx.IndexManifest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m.MediaType).To(Equal(types.OCIImageIndex))
	var got []string
	for _, d := range m.Manifests {
		got = append(got, d.Platform.String())
	}
	g.Expect(got).To(Equal([]string{"linux/amd64", "linux/arm64"}))

	_, err = Index(images, []v1.Platform{{OS: "linux", Architecture: "s390x"}})
	g.Expect(err).To(MatchError(ContainSubstring("no image for platform linux/s390x")))
}

func TestFindSourceWalksUpToCaravansModule(t *testing.T) {
	g := NewWithT(t)
	src, err := FindSource(context.Background(), ".")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(filepath.Join(src.Dir, "internal", "operatorimage")).To(BeADirectory())

	other := t.TempDir()
	g.Expect(os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n"), 0o644)).To(Succeed())
	_, err = FindSource(context.Background(), other)
	g.Expect(err).To(MatchError(ContainSubstring("no Caravan source tree")))
}

func TestPlatformsAreParsedOrRefusedWithTheirName(t *testing.T) {
	g := NewWithT(t)
	ps, err := ParsePlatforms([]string{"linux/amd64", "linux/arm/v7"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ps[1]).To(Equal(v1.Platform{OS: "linux", Architecture: "arm", Variant: "v7"}))
	_, err = ParsePlatforms([]string{"amd64"})
	g.Expect(err).To(MatchError(ContainSubstring(`platform "amd64"`)))
}

func TestTheImageUserIsTheOneTheDeploymentRunsAs(t *testing.T) {
	if UID != install.OperatorUID || GID != install.OperatorUID {
		t.Fatalf("the image runs as %d:%d, the Deployment as %d", UID, GID, install.OperatorUID)
	}
}
