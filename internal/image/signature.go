package image

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Cosign's key-based signatures, which `cosign verify --key` reads: an OCI manifest tagged
// sha256-HEX.sig in the signed artifact's repository, whose one layer is the simple-signing payload
// and whose layer annotation holds the base64 signature of that payload.
const (
	// SignaturePayloadType is the media type of the payload layer.
	SignaturePayloadType types.MediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	// SignatureAnnotation holds the layer's signature, base64.
	SignatureAnnotation = "dev.cosignproject.cosign/signature"
	// AttestationPayloadType is the media type of an attestation's layer, a DSSE envelope.
	AttestationPayloadType types.MediaType = "application/vnd.dsse.envelope.v1+json"
	// PredicateTypeAnnotation names, on an attestation's layer, the predicate type of its statement.
	PredicateTypeAnnotation = "predicateType"
)

// SignatureTag is the tag of the signatures of the artifact of digest ("sha256:HEX"): sha256-HEX.sig.
func SignatureTag(digest string) string {
	return cosignTag(digest, ".sig")
}

// AttestationTag is the tag of the attestations of the artifact of digest: sha256-HEX.att.
func AttestationTag(digest string) string {
	return cosignTag(digest, ".att")
}

// cosignTag is the tag cosign gives what it attaches to the artifact of digest: sha256-HEX, then suffix.
func cosignTag(digest, suffix string) string {
	return strings.Replace(digest, ":", "-", 1) + suffix
}

// PushSignature pushes signature, of payload, as the signature of ref (REPOSITORY@sha256:...) in
// cosign's format, replacing the signatures the tag held. It returns the signature's reference by
// digest.
func PushSignature(ctx context.Context, reg Registry, ref string, payload, signature []byte) (string, error) {
	return reg.pushCosign(ctx, ref, ".sig", payload, SignaturePayloadType,
		map[string]string{SignatureAnnotation: base64.StdEncoding.EncodeToString(signature)})
}

// PushAttestation pushes envelope, a signed DSSE envelope of an in-toto statement of predicateType,
// as the attestation of ref (REPOSITORY@sha256:...) that `cosign verify-attestation --key` reads,
// replacing those the tag held. It returns the attestation's reference by digest.
func PushAttestation(ctx context.Context, reg Registry, ref string, envelope []byte, predicateType string) (string, error) {
	// cosign writes an attestation as a signature whose signature is inside its payload.
	return reg.pushCosign(ctx, ref, ".att", envelope, AttestationPayloadType,
		map[string]string{SignatureAnnotation: "", PredicateTypeAnnotation: predicateType})
}

// pushCosign pushes data as the one layer of an OCI manifest tagged sha256-HEX+suffix in the
// repository of ref, as cosign stores signatures and attestations, and returns it by digest.
func (r Registry) pushCosign(ctx context.Context, ref, suffix string, data []byte, mediaType types.MediaType, annotations map[string]string) (string, error) {
	digest, err := r.digestRef(ref)
	if err != nil {
		return "", err
	}
	layer := static.NewLayer(data, mediaType)
	img, err := mutate.Append(empty.Image, mutate.Addendum{Layer: layer, MediaType: mediaType, Annotations: annotations})
	if err != nil {
		return "", err
	}
	img = mutate.ConfigMediaType(mutate.MediaType(img, types.OCIManifestSchema1), types.OCIConfigJSON)
	tag := digest.Context().Tag(cosignTag(digest.DigestStr(), suffix))
	if err := remote.Write(tag, img, r.options(ctx, tag)...); err != nil {
		return "", r.classify(ctx, opPush, tag.String(), err)
	}
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	return digest.Context().Digest(d.String()).String(), nil
}

// Signature is a signature of an artifact as cosign stores it.
type Signature struct {
	// Payload is the signed simple-signing document; Signature its signature, decoded.
	Payload, Signature []byte
}

// ReadSignatures returns the signatures cosign's tag holds for ref (REPOSITORY@sha256:...).
func ReadSignatures(ctx context.Context, reg Registry, ref string) ([]Signature, error) {
	digest, err := reg.digestRef(ref)
	if err != nil {
		return nil, err
	}
	tag := digest.Context().Tag(SignatureTag(digest.DigestStr()))
	img, err := remote.Image(tag, reg.options(ctx, tag)...)
	if err != nil {
		return nil, reg.classify(ctx, opPull, tag.String(), err)
	}
	manifest, err := img.Manifest()
	if err != nil {
		return nil, err
	}
	var out []Signature
	for _, desc := range manifest.Layers {
		if desc.MediaType != SignaturePayloadType {
			continue
		}
		sig, err := base64.StdEncoding.DecodeString(desc.Annotations[SignatureAnnotation])
		if err != nil {
			return nil, fmt.Errorf("the signature of %s: %w", tag, err)
		}
		payload, err := readBlob(img, desc.Digest)
		if err != nil {
			return nil, err
		}
		out = append(out, Signature{Payload: payload, Signature: sig})
	}
	return out, nil
}

// digestRef parses ref, which must name a digest.
func (r Registry) digestRef(ref string) (name.Digest, error) {
	parsed, err := r.parse(ref)
	if err != nil {
		return name.Digest{}, err
	}
	digest, ok := parsed.(name.Digest)
	if !ok {
		return name.Digest{}, fmt.Errorf("%s names no digest: a signature signs an artifact by digest", ref)
	}
	return digest, nil
}
