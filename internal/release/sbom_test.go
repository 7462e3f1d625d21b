package release

import (
	"bytes"
	"runtime/debug"
	"testing"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	. "github.com/onsi/gomega"
)

// TestTheBillOfMaterialsListsTheModulesTheBinaryWasBuiltWith: the CycloneDX document of a binary
// names it, its version and platform, and lists the Go standard library of its toolchain and each
// module of its build info with its version and the SHA-256 of go.sum.
func TestTheBillOfMaterialsListsTheModulesTheBinaryWasBuiltWith(t *testing.T) {
	g := NewWithT(t)
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/caravan-dev/caravan", Version: "(devel)"},
		Deps: []*debug.Module{
			{Path: "github.com/spf13/cobra", Version: "v1.10.1", Sum: "h1:lJeBwCfmrnXthfaupTUTPNP3ZDkR3VihiQRUk8jDUps="},
			{Path: "example.com/forked", Version: "v1.0.0", Sum: "h1:AAAA", Replace: &debug.Module{Path: "example.com/fork", Version: "v1.0.1",
				Sum: "h1:lJeBwCfmrnXthfaupTUTPNP3ZDkR3VihiQRUk8jDUps="}},
		}}
	data, err := sbom(info, CLIProgram, "v1.2.3", v1.Platform{OS: "linux", Architecture: "arm64"}, time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC))
	g.Expect(err).NotTo(HaveOccurred())
	bom := decodeSBOM(t, data)
	g.Expect(bom.Metadata.Timestamp).To(Equal("2026-12-07T00:00:00Z"))
	g.Expect(bom.Metadata.Component).To(HaveValue(And(HaveField("Name", "caravan"), HaveField("Version", "v1.2.3"),
		HaveField("PackageURL", "pkg:golang/github.com/caravan-dev/caravan@v1.2.3?goos=linux&goarch=arm64"))))
	sha := HaveField("Hashes", HaveValue(ConsistOf(And(HaveField("Algorithm", cdx.HashAlgoSHA256),
		HaveField("Value", "949781c027e6ae75ed85f6aea535133cd3f7643911dd58a189045493c8c3529b")))))
	g.Expect(*bom.Components).To(ConsistOf(
		And(HaveField("Name", "stdlib"), HaveField("Version", "1.26.8"), HaveField("PackageURL", "pkg:golang/stdlib@1.26.8")),
		And(HaveField("Name", "github.com/spf13/cobra"), HaveField("Version", "v1.10.1"),
			HaveField("PackageURL", "pkg:golang/github.com/spf13/cobra@v1.10.1"), sha),
		And(HaveField("Name", "example.com/fork"), HaveField("Version", "v1.0.1"), sha)), "a replaced module is listed as its replacement")
	g.Expect((*bom.Dependencies)[0].Dependencies).To(HaveValue(HaveLen(3)))

	info.Deps[0].Sum = "h1:not base64!"
	_, err = sbom(info, CLIProgram, "v1.2.3", v1.Platform{OS: "linux", Architecture: "arm64"}, time.Now())
	g.Expect(err).To(MatchError(ContainSubstring("module github.com/spf13/cobra")))
}

// decodeSBOM decodes a CycloneDX JSON document, failing t when it is not one.
func decodeSBOM(t *testing.T, data []byte) *cdx.BOM {
	t.Helper()
	bom := &cdx.BOM{}
	if err := cdx.NewBOMDecoder(bytes.NewReader(data), cdx.BOMFileFormatJSON).Decode(bom); err != nil {
		t.Fatalf("not a CycloneDX document: %v\n%s", err, data)
	}
	if bom.BOMFormat != "CycloneDX" || bom.Metadata == nil || bom.Components == nil {
		t.Fatalf("not a CycloneDX bill of materials:\n%s", data)
	}
	return bom
}
