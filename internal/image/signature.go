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
)

// SignatureTag is the tag of the signatures of the artifact of digest ("sha256:HEX"): sha256-HEX.sig.
func SignatureTag(digest string) string {
	return strings.Replace(digest, ":", "-", 1) + ".sig"
}

// PushSignature pushes signature, of payload, as the signature of ref (REPOSITORY@sha256:...) in
// cosign's format, replacing the signatures the tag held. It returns the signature's reference by
// digest.
func PushSignature(ctx context.Context, reg Registry, ref string, payload, signature []byte) (string, error) {
	digest, err := reg.digestRef(ref)
	if err != nil {
		return "", err
	}
	layer := static.NewLayer(payload, SignaturePayloadType)
	img, err := mutate.Append(empty.Image, mutate.Addendum{Layer: layer, MediaType: SignaturePayloadType,
		Annotations: map[string]string{SignatureAnnotation: base64.StdEncoding.EncodeToString(signature)}})
	if err != nil {
		return "", err
	}
	img = mutate.ConfigMediaType(mutate.MediaType(img, types.OCIManifestSchema1), types.OCIConfigJSON)
	tag := digest.Context().Tag(SignatureTag(digest.DigestStr()))
	if err := remote.Write(tag, img, reg.options(ctx, tag)...); err != nil {
		return "", reg.classify(ctx, opPush, tag.String(), err)
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
