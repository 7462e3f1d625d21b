package operatorimage

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Where things are in the image.
const (
	// Entrypoint is the caravan binary.
	Entrypoint = "/caravan"
	// UID and GID are the non-root user the operator runs as.
	UID = 65532
	GID = 65532
	// CACertificates is the CA bundle, where Go's crypto/x509 looks first on Linux.
	CACertificates = "/etc/ssl/certs/ca-certificates.crt"
)

// OCI annotation keys of the image config's labels.
const (
	LabelVersion  = "org.opencontainers.image.version"
	LabelRevision = "org.opencontainers.image.revision"
	LabelSource   = "org.opencontainers.image.source"
	LabelTitle    = "org.opencontainers.image.title"
	LabelLicenses = "org.opencontainers.image.licenses"
)

// HostCACertificates is the CA bundle of a Debian-like host, which the image
// carries by default.
const HostCACertificates = "/etc/ssl/certs/ca-certificates.crt"

// epoch dates every file and the image itself, so that the same binary
// gives the same image digest.
var epoch = time.Unix(0, 0).UTC()

// Image returns the operator image for platform p, run as UID:GID with the
// binary as entrypoint. It has a base layer (users, CA certificates, /tmp)
// and a layer with the binary, and is labelled with the source's version and
// revision.
func Image(binary string, p v1.Platform, src Source, caBundle []byte) (v1.Image, error) {
	bin, err := os.ReadFile(binary)
	if err != nil {
		return nil, fmt.Errorf("reading the operator binary: %w", err)
	}
	base, err := layer(baseFiles(caBundle))
	if err != nil {
		return nil, err
	}
	app, err := layer([]entry{{name: Entrypoint[1:], mode: 0o755, content: bin}})
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, MediaType: types.OCILayer},
		mutate.Addendum{Layer: app, MediaType: types.OCILayer})
	if err != nil {
		return nil, fmt.Errorf("assembling the operator image: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Variant = p.OS, p.Architecture, p.Variant
	cfg.Created = v1.Time{Time: epoch}
	cfg.Config = v1.Config{
		User:       fmt.Sprintf("%d:%d", UID, GID),
		Entrypoint: []string{Entrypoint},
		Cmd:        []string{"operator"},
		WorkingDir: "/",
		Env:        []string{"SSL_CERT_FILE=" + CACertificates},
		Labels: map[string]string{
			LabelVersion:  src.version(),
			LabelRevision: src.Revision,
			LabelSource:   "https://" + ModulePath,
			LabelTitle:    "caravan-operator",
			LabelLicenses: "Apache-2.0",
		},
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, fmt.Errorf("writing the operator image config: %w", err)
	}
	return img, nil
}

// Index returns an OCI index of images, one per platform.
func Index(images map[string]v1.Image, platforms []v1.Platform) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		img, ok := images[p.String()]
		if !ok {
			return nil, fmt.Errorf("no image for platform %s", p.String())
		}
		platform := p
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img,
			Descriptor: v1.Descriptor{MediaType: types.OCIManifestSchema1, Platform: &platform}})
	}
	return idx, nil
}

// entry is one file or directory of a layer.
type entry struct {
	name    string // relative to /, directories end in /
	mode    int64
	uid     int
	content []byte
}

// baseFiles are the minimal root filesystem: the users, the CA bundle, a
// world-writable /tmp and the non-root user's home.
func baseFiles(caBundle []byte) []entry {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", UID, GID)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", GID)
	return []entry{
		{name: "etc/", mode: 0o755},
		{name: "etc/group", mode: 0o644, content: []byte(group)},
		{name: "etc/passwd", mode: 0o644, content: []byte(passwd)},
		{name: "etc/ssl/", mode: 0o755},
		{name: "etc/ssl/certs/", mode: 0o755},
		{name: CACertificates[1:], mode: 0o644, content: caBundle},
		{name: "home/", mode: 0o755},
		{name: "home/nonroot/", mode: 0o700, uid: UID},
		{name: "tmp/", mode: 0o1777},
	}
}

// layer writes entries, in order, as a deterministic gzip-compressed tar layer.
func layer(entries []entry) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid, ModTime: epoch, Format: tar.FormatPAX}
		if e.name[len(e.name)-1] == '/' {
			hdr.Typeflag = tar.TypeDir
		} else {
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(e.content))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("writing %s into the operator image: %w", e.name, err)
		}
		if _, err := tw.Write(e.content); err != nil {
			return nil, fmt.Errorf("writing %s into the operator image: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("compressing an operator image layer: %w", err)
	}
	return l, nil
}
