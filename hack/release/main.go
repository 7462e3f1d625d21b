// Command release builds and publishes a version of Caravan (see internal/release), from the root
// of the source tree:
//
//	go run ./hack/release v1.2.3 REGISTRY[/REPOSITORY]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/operatorimage"
	"github.com/caravan-dev/caravan/internal/release"
)

const usage = `Usage: hack/release.sh [flags] VERSION REGISTRY[/REPOSITORY]

Builds and publishes Caravan VERSION (v1.2.3, or v1.2.3-rc.1) from this source tree, which must
have no uncommitted changes:
  - the CLI for linux, darwin and windows, amd64 and arm64: dist/VERSION/caravan-VERSION-OS-ARCH.tar.gz
    (.zip for windows), with SHA256SUMS and a CycloneDX bill of materials of each binary;
  - the operator image, to REGISTRY[/REPOSITORY]/caravan/operator:VERSION, and the images kits
    build on (caravan/base, caravan/builder), each printed by digest;
  - the Helm chart, packaged into dist/VERSION and pushed to REGISTRY[/REPOSITORY]/charts/caravan;
  - the kustomize bases and the OLM bundle, with the operator image by digest, under dist/VERSION;
  - the OLM bundle image, to REGISTRY[/REPOSITORY]/caravan/operator-bundle:VERSION, and the OLM
    catalog of every release (the one at caravan/operator-catalog:latest, and this one's bundle),
    to caravan/operator-catalog:VERSION and :latest, and under dist/VERSION/deploy/olm/catalog;
  - signatures of every image and the chart by digest, in cosign's format, and of SHA256SUMS
    (SHA256SUMS.sig), with the key --signing-key names; its public key as dist/VERSION/cosign.pub;
  - dist/VERSION/RELEASE.md, then the CHANGELOG.md section of VERSION, made of its Unreleased one.
Credentials come from the docker configuration (~/.docker/config.json), as for docker push. The
password of a cosign key comes from COSIGN_PASSWORD, as for cosign.

Flags:
`

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run() error {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage); fs.PrintDefaults() }
	out := fs.String("out", "", "directory of the release's files (default dist/VERSION)")
	insecure := fs.Bool("insecure", false, "reach the registry over plain HTTP")
	cliPlatforms := fs.String("cli-platforms", strings.Join(operatorimage.PlatformNames(release.CLIPlatforms), ","), "platforms of the CLI, os/arch, comma-separated")
	imagePlatforms := fs.String("image-platforms", strings.Join(operatorimage.PlatformNames(operatorimage.Platforms), ","), "platforms of the operator image, os/arch, comma-separated")
	kitImages := fs.String("kit-images", "base,builder", "images kits build on to push (base, builder), comma-separated; empty for none")
	allowDirty := fs.Bool("allow-dirty", false, "release a tree with uncommitted changes (for a trial run)")
	signingKey := fs.String("signing-key", "", "the private key the release is signed with: cosign's (cosign generate-key-pair) or a PEM ECDSA P-256 key")
	unsigned := fs.Bool("unsigned", false, "sign nothing (for a trial run; the notes say the release is unsigned)")
	catalogBase := fs.String("catalog-base", release.OPMImage, "image the OLM catalog image is built on, which serves it to OLM; empty for an image of the catalog alone (OLM v1's ClusterCatalog)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return errors.New("give VERSION and REGISTRY[/REPOSITORY]")
	}
	version, target := fs.Arg(0), strings.TrimSuffix(fs.Arg(1), "/")
	if _, err := release.ParseVersion(version); err != nil {
		return err
	}
	reg, prefix, err := image.PushTarget(target, *insecure)
	if err != nil {
		return err
	}
	var signer signature.SignerVerifier
	if *signingKey != "" {
		pemKey, err := os.ReadFile(*signingKey)
		if err != nil {
			return fmt.Errorf("--signing-key: %w", err)
		}
		if signer, err = release.LoadSigningKey(pemKey, []byte(os.Getenv("COSIGN_PASSWORD"))); err != nil {
			return fmt.Errorf("--signing-key %s: %w", *signingKey, err)
		}
	}
	cli, err := operatorimage.ParsePlatforms(split(*cliPlatforms))
	if err != nil {
		return err
	}
	images, err := operatorimage.ParsePlatforms(split(*imagePlatforms))
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	src, err := operatorimage.FindSource(ctx, ".")
	if err != nil {
		return err
	}
	cacheDir, err := localcluster.DefaultCacheDir()
	if err != nil {
		return err
	}
	if *out == "" {
		*out = filepath.Join(src.Dir, "dist", version)
	}
	res, err := release.Run(ctx, release.Options{Version: version,
		Registry: reg, Prefix: prefix,
		Source: src, AllowDirty: *allowDirty, OutDir: *out,
		CLIPlatforms: cli, ImagePlatforms: images, KitImages: split(*kitImages), CatalogBase: *catalogBase,
		CacheDir: cacheDir, Now: time.Now(), Progress: os.Stderr, SigningKey: signer, Unsigned: *unsigned})
	if err != nil {
		return err
	}
	fmt.Printf("Caravan %s is published; its files are in %s:\n", version, *out)
	for _, f := range res.Files {
		fmt.Println("  " + f)
	}
	fmt.Printf("operator image: %s\nchart: oci://%s\n", res.Operator, res.Chart)
	fmt.Printf("OLM bundle: %s\nOLM catalog: %s\n", res.Bundle, res.Catalog)
	fmt.Printf("CHANGELOG.md has its %s section: commit it and tag the release (git tag %s).\n", version, version)
	return nil
}

func split(list string) []string {
	var out []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
