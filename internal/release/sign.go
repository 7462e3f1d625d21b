package release

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"

	"github.com/caravan-dev/caravan/internal/image"
)

// The files that let a user verify a release.
const (
	// PublicKeyFile is the public key of the release's signatures, PEM, as cosign writes cosign.pub.
	PublicKeyFile = "cosign.pub"
	// ChecksumsSignatureFile is the signature of ChecksumsFile, base64, as `cosign sign-blob` writes it.
	ChecksumsSignatureFile = ChecksumsFile + ".sig"
)

// LoadSigningKey reads the private key a release is signed with: cosign's (`cosign
// generate-key-pair`, decrypted with password) or a PEM ECDSA P-256 key (`openssl genpkey
// -algorithm EC -pkeyopt ec_paramgen_curve:P-256`).
func LoadSigningKey(pemKey, password []byte) (signature.SignerVerifier, error) {
	key, err := cryptoutils.UnmarshalPEMToPrivateKey(pemKey, cryptoutils.StaticPasswordFunc(password))
	if err != nil {
		return nil, fmt.Errorf("the signing key: %w", err)
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, fmt.Errorf("the signing key is a %T: want an ECDSA P-256 key, as cosign makes", key)
	}
	return signature.LoadECDSASignerVerifier(ec, crypto.SHA256)
}

// signRelease signs every artifact the release pushed, by digest, in cosign's format, and the
// CLI's checksums; it writes the public key beside them. It returns the files written.
func signRelease(ctx context.Context, o Options, res *Result) ([]string, error) {
	pub, err := o.SigningKey.PublicKey()
	if err != nil {
		return nil, err
	}
	pubPEM, err := cryptoutils.MarshalPublicKeyToPEM(pub)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(o.OutDir, PublicKeyFile), pubPEM, 0o644); err != nil {
		return nil, err
	}
	res.Signatures = map[string]string{}
	for _, ref := range res.signed() {
		sig, err := signArtifact(ctx, o, ref)
		if err != nil {
			return nil, fmt.Errorf("signing %s: %w", ref, err)
		}
		res.Signatures[ref] = sig
	}
	sums, err := os.ReadFile(filepath.Join(o.OutDir, ChecksumsFile))
	if err != nil {
		return nil, err
	}
	sig, err := o.SigningKey.SignMessage(bytes.NewReader(sums))
	if err != nil {
		return nil, err
	}
	encoded := base64.StdEncoding.EncodeToString(sig)
	if err := os.WriteFile(filepath.Join(o.OutDir, ChecksumsSignatureFile), []byte(encoded), 0o644); err != nil {
		return nil, err
	}
	return []string{PublicKeyFile, ChecksumsSignatureFile}, nil
}

// signArtifact signs ref (REPOSITORY@sha256:...) as `cosign sign --key` does, and returns the
// signature's reference.
func signArtifact(ctx context.Context, o Options, ref string) (string, error) {
	digest, err := name.NewDigest(ref, name.Insecure)
	if err != nil {
		return "", err
	}
	doc, err := payload.Cosign{Image: digest}.MarshalJSON()
	if err != nil {
		return "", err
	}
	sig, err := o.SigningKey.SignMessage(bytes.NewReader(doc))
	if err != nil {
		return "", err
	}
	return image.PushSignature(ctx, o.Registry, ref, doc, sig)
}

// signed are the artifacts a release signs, by digest: the operator image, the images kits build
// on, the chart and the OLM bundle and catalog images.
func (r Result) signed() []string {
	refs := []string{r.Operator}
	for _, n := range sortedKeys(r.KitImages) {
		refs = append(refs, r.KitImages[n])
	}
	return append(refs, r.Chart, r.Bundle, r.Catalog)
}
