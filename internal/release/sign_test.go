package release

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/caravan-dev/caravan/internal/gobuild"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/image/imagetest"
	"github.com/caravan-dev/caravan/internal/localcluster"
)

// testSigningKey is a key as `cosign generate-key-pair` makes it: ECDSA P-256, encrypted with a password.
func testSigningKey(t *testing.T) signature.SignerVerifier {
	t.Helper()
	priv, _, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc([]byte("release")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(priv), "ENCRYPTED SIGSTORE PRIVATE KEY") {
		t.Fatalf("not cosign's key format:\n%s", priv)
	}
	sv, err := LoadSigningKey(priv, []byte("release"))
	if err != nil {
		t.Fatal(err)
	}
	return sv
}

func TestTheSigningKeyIsCosignsOrAnECDSAP256PEM(t *testing.T) {
	priv, _, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc([]byte("right")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSigningKey(priv, []byte("wrong")); err == nil {
		t.Error("a cosign key opened with the wrong password")
	}
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(ec)
	if _, err := LoadSigningKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil); err != nil {
		t.Errorf("an openssl P-256 key: %v", err)
	}
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	der, _ = x509.MarshalPKCS8PrivateKey(p384)
	if _, err := LoadSigningKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil); err == nil || !strings.Contains(err.Error(), "P-256") {
		t.Errorf("a P-384 key: %v, want a refusal naming P-256", err)
	}
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	der, _ = x509.MarshalPKCS8PrivateKey(rk)
	if _, err := LoadSigningKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil); err == nil || !strings.Contains(err.Error(), "ECDSA P-256") {
		t.Errorf("an RSA key: %v, want a refusal naming ECDSA P-256", err)
	}
}

// checkSignatures verifies, with the standard library alone and the published cosign.pub, that
// each artifact of res carries a signature in cosign's format of a payload naming its digest, and
// that SHA256SUMS.sig signs SHA256SUMS (with openssl too, where it is installed), and not another.
func checkSignatures(t *testing.T, reg image.Registry, out string, res Result) {
	t.Helper()
	pub := publishedKey(t, out)
	refs := res.signed()
	if len(refs) != 5 || len(res.Signatures) != 5 {
		t.Fatalf("signed %v, signatures %v: want the operator, base, chart, bundle and catalog", refs, res.Signatures)
	}
	for _, ref := range refs {
		sigs, err := image.ReadSignatures(context.Background(), reg, ref)
		if err != nil || len(sigs) != 1 {
			t.Fatalf("the signatures of %s: %d, %v", ref, len(sigs), err)
		}
		digest := sha256.Sum256(sigs[0].Payload)
		if !ecdsa.VerifyASN1(pub, digest[:], sigs[0].Signature) {
			t.Errorf("the signature of %s does not verify with %s", ref, PublicKeyFile)
		}
		var doc struct {
			Critical struct {
				Identity struct {
					DockerReference string `json:"docker-reference"`
				} `json:"identity"`
				Image struct {
					DockerManifestDigest string `json:"docker-manifest-digest"`
				} `json:"image"`
				Type string `json:"type"`
			} `json:"critical"`
		}
		if err := json.Unmarshal(sigs[0].Payload, &doc); err != nil {
			t.Fatal(err)
		}
		repo, dig, _ := strings.Cut(ref, "@")
		if doc.Critical.Image.DockerManifestDigest != dig || doc.Critical.Identity.DockerReference != repo ||
			doc.Critical.Type != "cosign container image signature" {
			t.Errorf("the payload of %s: %s", ref, sigs[0].Payload)
		}
	}
	sums, err := os.ReadFile(filepath.Join(out, ChecksumsFile))
	if err != nil {
		t.Fatal(err)
	}
	encoded, err := os.ReadFile(filepath.Join(out, ChecksumsSignatureFile))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := base64.StdEncoding.DecodeString(string(encoded))
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256(sums)
	if !ecdsa.VerifyASN1(pub, digest[:], sig) {
		t.Errorf("%s does not verify %s", ChecksumsSignatureFile, ChecksumsFile)
	}
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Logf("openssl is not installed: the release notes' openssl command is not tried")
		return
	}
	dir := t.TempDir()
	der, tampered := filepath.Join(dir, "sums.der"), filepath.Join(dir, "tampered")
	if err := os.WriteFile(der, sig, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tampered, append(sums, "0000  caravan-evil.tar.gz\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	verify := func(file string) (string, error) {
		b, err := exec.Command(openssl, "dgst", "-sha256", "-verify", filepath.Join(out, PublicKeyFile), "-signature", der, file).CombinedOutput()
		return string(b), err
	}
	if got, err := verify(filepath.Join(out, ChecksumsFile)); err != nil || !strings.Contains(got, "Verified OK") {
		t.Errorf("openssl on %s: %s %v", ChecksumsFile, got, err)
	}
	if got, err := verify(tampered); err == nil {
		t.Errorf("openssl verified a changed %s: %s", ChecksumsFile, got)
	}
}

// cosignVersion is the cosign the signatures are checked with, built once into the cache.
const cosignVersion = "v3.1.3"

// cosignRelease signs and attests, as a release does, a random image pushed to a registry of the
// test and an archive listed in SHA256SUMS, in signed; other holds another key's cosign.pub alone.
// It returns the image by digest, its digest, and the archive's path.
func cosignRelease(t *testing.T) (ref string, digest v1.Hash, archive, signed, other string) {
	t.Helper()
	reg := imagetest.StartRegistry(t)
	ref, digest = pushRandomImage(t, reg, "team/caravan/operator")
	signed, other = t.TempDir(), t.TempDir()
	archive = filepath.Join(signed, "caravan-v0.1.0-linux-amd64.tar.gz")
	content := []byte("an archive of the CLI")
	if err := os.WriteFile(archive, content, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(content)
	if err := os.WriteFile(filepath.Join(signed, ChecksumsFile), fmt.Appendf(nil, "%x  %s\n", sum, filepath.Base(archive)), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Options{Version: "v0.1.0", Registry: reg.Config(), SigningKey: testSigningKey(t), OutDir: signed}
	res := Result{Operator: ref, Chart: ref, Bundle: ref, Catalog: ref}
	if _, err := signRelease(context.Background(), o, &res); err != nil {
		t.Fatal(err)
	}
	if _, err := attestRelease(context.Background(), o, &res, time.Now()); err != nil {
		t.Fatal(err)
	}
	// The other key's public half, to be refused with.
	pub, err := testSigningKey(t).PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	otherPEM, err := cryptoutils.MarshalPublicKeyToPEM(pub)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, PublicKeyFile), otherPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	return ref, digest, archive, signed, other
}

// TestCosignVerifiesTheReleasesSignatures: cosign itself, as a user runs it with the release's
// cosign.pub, verifies an image signed as the release signs it, SHA256SUMS.sig, and the
// provenance of the image and of the CLI's archive, and refuses each with another key.
func TestCosignVerifiesTheReleasesSignatures(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cosign once into the cache")
	}
	cosign := testTool(t, "github.com/sigstore/cosign/v3/cmd/cosign", cosignVersion)
	ref, digest, archive, signed, other := cosignRelease(t)
	run := func(args ...string) (string, error) {
		b, err := exec.Command(cosign, args...).CombinedOutput()
		return string(b), err
	}
	for _, c := range []struct {
		what, want string
		args       []string
	}{
		{"cosign verify", digest.String(), []string{"verify", "--allow-http-registry", ref}},
		{"cosign verify-blob", "Verified OK", []string{"verify-blob", "--signature", filepath.Join(signed, ChecksumsSignatureFile),
			filepath.Join(signed, ChecksumsFile)}},
		{"cosign verify-attestation", `"payloadType":"application/vnd.in-toto+json"`, []string{"verify-attestation", "--type", "slsaprovenance1",
			"--allow-http-registry", ref}},
		{"cosign verify-blob-attestation", "Verified OK", []string{"verify-blob-attestation", "--type", "slsaprovenance1",
			"--signature", filepath.Join(signed, ProvenanceName("v0.1.0")), archive}},
	} {
		for _, keyDir := range []string{signed, other} {
			args := append([]string{c.args[0], "--key", filepath.Join(keyDir, PublicKeyFile), "--insecure-ignore-tlog=true"}, c.args[1:]...)
			out, err := run(args...)
			if keyDir == signed && (err != nil || !strings.Contains(out, c.want)) {
				t.Errorf("%s with the release's key: %v\n%s", c.what, err, out)
			}
			if keyDir == other && err == nil {
				t.Errorf("%s took another key:\n%s", c.what, out)
			}
		}
	}
	// A blob the provenance is not of is refused, with the right key.
	if err := os.WriteFile(archive, []byte("another archive"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run("verify-blob-attestation", "--key", filepath.Join(signed, PublicKeyFile), "--insecure-ignore-tlog=true",
		"--type", "slsaprovenance1", "--signature", filepath.Join(signed, ProvenanceName("v0.1.0")), archive); err == nil {
		t.Errorf("cosign verify-blob-attestation took an archive the provenance is not of:\n%s", out)
	}
}

// orasVersion is the oras the attached bills of materials are read with, built once into the cache.
const orasVersion = "v1.3.6"

// TestOrasFindsTheBillOfMaterialsAttachedToAnImage: oras, as a user runs it, lists the bill of
// materials the release attaches to an image and pulls it as the release wrote it.
func TestOrasFindsTheBillOfMaterialsAttachedToAnImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds oras once into the cache")
	}
	oras := testTool(t, "oras.land/oras/cmd/oras", orasVersion)
	reg := imagetest.StartRegistry(t)
	ref, _ := pushRandomImage(t, reg, "team/caravan/base")
	out := t.TempDir()
	const file = "caravan-base-v0.1.0-linux-amd64.cdx.json"
	bom := []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6","components":[]}`)
	if err := os.WriteFile(filepath.Join(out, file), bom, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := attachSBOM(context.Background(), Options{Registry: reg.Config(), OutDir: out}, ref, file); err != nil {
		t.Fatal(err)
	}
	listed, err := exec.Command(oras, "discover", "--plain-http", "--format", "json", "--artifact-type", image.CycloneDXType, ref).CombinedOutput()
	if err != nil {
		t.Fatalf("oras discover: %v\n%s", err, listed)
	}
	var found struct {
		Referrers []struct {
			Reference    string `json:"reference"`
			ArtifactType string `json:"artifactType"`
		} `json:"referrers"`
	}
	if err := json.Unmarshal(listed, &found); err != nil || len(found.Referrers) != 1 || found.Referrers[0].ArtifactType != image.CycloneDXType {
		t.Fatalf("oras discover lists %s, want one CycloneDX artifact (%v)", listed, err)
	}
	pulled := t.TempDir()
	if b, err := exec.Command(oras, "pull", "--plain-http", "-o", pulled, found.Referrers[0].Reference).CombinedOutput(); err != nil {
		t.Fatalf("oras pull: %v\n%s", err, b)
	}
	if got, err := os.ReadFile(filepath.Join(pulled, file)); err != nil || !bytes.Equal(got, bom) {
		t.Errorf("oras pull wrote %q (%v), want the bill of materials as attached", got, err)
	}
}

// testTool builds the command pkg at version once into the cache, with go install, and returns it.
func testTool(t *testing.T, pkg, version string) string {
	t.Helper()
	cache, err := localcluster.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := gobuild.Install(cache, pkg, version, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// pushRandomImage pushes a random image to repo of reg and returns it by digest, and the digest.
func pushRandomImage(t *testing.T, reg *imagetest.Registry, repo string) (string, v1.Hash) {
	t.Helper()
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	tagged := imagetest.PushImage(t, reg, repo+":v0.1.0", img)
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(tagged, ":v0.1.0") + "@" + digest.String(), digest
}
