package image

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// An artifact that refers to an image, by OCI 1.1's subject field: `oras discover` lists an image's
// referrers, from the registry's referrers API, or the fallback tag sha256-HEX where it has none.

// CycloneDXType is the media type, and artifact type, of a CycloneDX JSON bill of materials.
const CycloneDXType = "application/vnd.cyclonedx+json"

// titleAnnotation names a layer's file, as `oras pull` writes it.
const titleAnnotation = "org.opencontainers.image.title"

// emptyConfig is OCI's empty descriptor's content, the config of an artifact.
var emptyConfig = []byte("{}")

// rawManifest is a manifest pushed as it is.
type rawManifest struct {
	raw       []byte
	mediaType types.MediaType
}

func (m rawManifest) RawManifest() ([]byte, error)        { return m.raw, nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return m.mediaType, nil }

// AttachArtifact pushes data, a file named file of type artifactType, as an artifact referring to
// ref (REPOSITORY@sha256:...), and returns the artifact by digest.
func AttachArtifact(ctx context.Context, reg Registry, ref, artifactType, file string, data []byte) (string, error) {
	subject, err := reg.digestRef(ref)
	if err != nil {
		return "", err
	}
	opts := append(reg.options(ctx, subject), remote.WithReferrersTagFallback(true))
	desc, err := remote.Head(subject, opts...)
	if err != nil {
		return "", reg.classify(ctx, opPull, subject.String(), err)
	}
	blobs := []struct {
		data      []byte
		mediaType types.MediaType
	}{{emptyConfig, types.OCIEmptyJSON}, {data, types.MediaType(artifactType)}}
	descs := make([]v1.Descriptor, len(blobs))
	for i, b := range blobs {
		if err := remote.WriteLayer(subject.Context(), static.NewLayer(b.data, b.mediaType), opts...); err != nil {
			return "", reg.classify(ctx, opPush, subject.String(), err)
		}
		descs[i] = v1.Descriptor{MediaType: b.mediaType, Size: int64(len(b.data)), Digest: sha256Of(b.data)}
	}
	descs[1].Annotations = map[string]string{titleAnnotation: file}
	raw, err := json.Marshal(v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1, ArtifactType: artifactType,
		Config: descs[0], Layers: descs[1:], Subject: &v1.Descriptor{MediaType: desc.MediaType, Size: desc.Size, Digest: desc.Digest}})
	if err != nil {
		return "", err
	}
	digest := sha256Of(raw)
	at := subject.Context().Digest(digest.String())
	if err := remote.Put(at, rawManifest{raw: raw, mediaType: types.OCIManifestSchema1}, opts...); err != nil {
		return "", reg.classify(ctx, opPush, at.String(), err)
	}
	return at.String(), nil
}

// ReadArtifacts returns the files of the artifacts of type artifactType that refer to ref
// (REPOSITORY@sha256:...), by their file names.
func ReadArtifacts(ctx context.Context, reg Registry, ref, artifactType string) (map[string][]byte, error) {
	subject, err := reg.digestRef(ref)
	if err != nil {
		return nil, err
	}
	opts := reg.options(ctx, subject)
	idx, err := remote.Referrers(subject, append(opts, remote.WithFilter("artifactType", artifactType))...)
	if err != nil {
		return nil, reg.classify(ctx, opPull, subject.String(), err)
	}
	index, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, d := range index.Manifests {
		if d.ArtifactType != artifactType {
			continue
		}
		img, err := remote.Image(subject.Context().Digest(d.Digest.String()), opts...)
		if err != nil {
			return nil, reg.classify(ctx, opPull, subject.String(), err)
		}
		manifest, err := img.Manifest()
		if err != nil {
			return nil, err
		}
		for _, l := range manifest.Layers {
			if string(l.MediaType) != artifactType {
				continue
			}
			data, err := readBlob(img, l.Digest)
			if err != nil {
				return nil, fmt.Errorf("the artifact %s of %s: %w", d.Digest, ref, err)
			}
			out[l.Annotations[titleAnnotation]] = data
		}
	}
	return out, nil
}

// readBlob reads the layer of img of digest d.
func readBlob(img v1.Image, d v1.Hash) ([]byte, error) {
	layer, err := img.LayerByDigest(d)
	if err != nil {
		return nil, err
	}
	rc, err := layer.Compressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// sha256Of is the SHA-256 digest of data.
func sha256Of(data []byte) v1.Hash {
	// Reading from memory cannot fail.
	h, _, _ := v1.SHA256(bytes.NewReader(data))
	return h
}
