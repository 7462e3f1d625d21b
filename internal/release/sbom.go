package release

import (
	"bytes"
	"debug/buildinfo"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/caravan-dev/caravan/internal/debimage"
)

// Programs of the release, as their bills of materials name them.
const (
	CLIProgram      = "caravan"
	OperatorProgram = "caravan-operator"
)

// SBOMName is the name of the CycloneDX bill of materials of program (caravan, the CLI, or
// caravan-operator, the operator image's binary) of version for platform p.
func SBOMName(program, version string, p v1.Platform) string {
	return fmt.Sprintf("%s-%s-%s-%s.cdx.json", program, version, p.OS, p.Architecture)
}

// writeDebianSBOM writes to dir the CycloneDX bill of materials of the image kits build on named
// name, of version for platform p, from the Debian packages its label pins, and returns its name.
func writeDebianSBOM(dir string, img v1.Image, name, version string, p v1.Platform, now time.Time) (string, error) {
	cfg, err := img.ConfigFile()
	if err != nil {
		return "", err
	}
	pkgs, err := debimage.ParsePackages(cfg.Config.Labels[debimage.LabelPackages])
	if err != nil {
		return "", err
	}
	program := "caravan-" + name
	mainRef := "pkg:oci/" + program + "@" + version
	bom := cdx.NewBOM()
	bom.SerialNumber = ""
	bom.Metadata = &cdx.Metadata{Timestamp: now.UTC().Format(time.RFC3339),
		Component: &cdx.Component{BOMRef: mainRef, Type: cdx.ComponentTypeContainer, Name: program, Version: version}}
	components := make([]cdx.Component, 0, len(pkgs))
	refs := make([]string, 0, len(pkgs))
	for _, pkg := range pkgs {
		ref := fmt.Sprintf("pkg:deb/debian/%s@%s?arch=%s", pkg.Name, url.PathEscape(pkg.Version), pkg.Arch)
		components = append(components, cdx.Component{BOMRef: ref, Type: cdx.ComponentTypeLibrary, Name: pkg.Name,
			Version: pkg.Version, PackageURL: ref})
		refs = append(refs, ref)
	}
	bom.Components = &components
	bom.Dependencies = &[]cdx.Dependency{{Ref: mainRef, Dependencies: &refs}}
	var out bytes.Buffer
	if err := cdx.NewBOMEncoder(&out, cdx.BOMFileFormatJSON).SetPretty(true).Encode(bom); err != nil {
		return "", err
	}
	file := SBOMName(program, version, p)
	return file, os.WriteFile(filepath.Join(dir, file), out.Bytes(), 0o644)
}

// writeSBOM writes to dir the CycloneDX bill of materials of the Go binary bin, program of
// version for platform p, from the module data the Go toolchain embeds in it, and returns its name.
func writeSBOM(dir, bin, program, version string, p v1.Platform, now time.Time) (string, error) {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return "", fmt.Errorf("reading the module data of %s: %w", bin, err)
	}
	data, err := sbom(info, program, version, p, now)
	if err != nil {
		return "", err
	}
	name := SBOMName(program, version, p)
	return name, os.WriteFile(filepath.Join(dir, name), data, 0o644)
}

// sbom is the CycloneDX bill of materials of a binary of the build info: the binary, of version
// for platform p, made at now, whose components are the Go standard library of its toolchain and
// each module it was built with, as it was built (a replaced module by its replacement).
func sbom(info *buildinfo.BuildInfo, program, version string, p v1.Platform, now time.Time) ([]byte, error) {
	mainRef := "pkg:golang/" + info.Main.Path + "@" + version
	goVersion := strings.TrimPrefix(info.GoVersion, "go")
	bom := cdx.NewBOM()
	bom.SerialNumber = ""
	bom.Metadata = &cdx.Metadata{
		Timestamp: now.UTC().Format(time.RFC3339),
		Component: &cdx.Component{BOMRef: mainRef, Type: cdx.ComponentTypeApplication, Name: program, Version: version,
			PackageURL: mainRef + "?goos=" + p.OS + "&goarch=" + p.Architecture,
			Properties: &[]cdx.Property{{Name: "go:module", Value: info.Main.Path}, {Name: "go:toolchain", Value: info.GoVersion}}},
	}
	stdlib := "pkg:golang/stdlib@" + goVersion
	components := []cdx.Component{{BOMRef: stdlib, Type: cdx.ComponentTypeLibrary, Name: "stdlib", Version: goVersion, PackageURL: stdlib}}
	for _, m := range info.Deps {
		if m.Replace != nil {
			m = m.Replace
		}
		ref := "pkg:golang/" + m.Path + "@" + m.Version
		c := cdx.Component{BOMRef: ref, Type: cdx.ComponentTypeLibrary, Name: m.Path, Version: m.Version, PackageURL: ref}
		if sum, ok := strings.CutPrefix(m.Sum, "h1:"); ok {
			// The go.sum hash: the SHA-256 of the module's file list with their hashes.
			raw, err := base64.StdEncoding.DecodeString(sum)
			if err != nil {
				return nil, fmt.Errorf("the hash %q of module %s: %w", m.Sum, m.Path, err)
			}
			c.Hashes = &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: hex.EncodeToString(raw)}}
		}
		components = append(components, c)
	}
	refs := make([]string, 0, len(components))
	for _, c := range components {
		refs = append(refs, c.BOMRef)
	}
	bom.Components = &components
	bom.Dependencies = &[]cdx.Dependency{{Ref: mainRef, Dependencies: &refs}}
	var out bytes.Buffer
	if err := cdx.NewBOMEncoder(&out, cdx.BOMFileFormatJSON).SetPretty(true).Encode(bom); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
