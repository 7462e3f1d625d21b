package release

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caravan-dev/caravan/internal/image"
)

// statement is the part of an in-toto statement of SLSA provenance the tests read.
type statement struct {
	Type    string `json:"_type"`
	Subject []struct {
		Name   string            `json:"name"`
		Digest map[string]string `json:"digest"`
	} `json:"subject"`
	PredicateType string `json:"predicateType"`
	Predicate     struct {
		BuildDefinition struct {
			BuildType            string         `json:"buildType"`
			ExternalParameters   map[string]any `json:"externalParameters"`
			ResolvedDependencies []struct {
				URI    string            `json:"uri"`
				Digest map[string]string `json:"digest"`
			} `json:"resolvedDependencies"`
		} `json:"buildDefinition"`
		RunDetails struct {
			Builder struct {
				ID string `json:"id"`
			} `json:"builder"`
		} `json:"runDetails"`
	} `json:"predicate"`
}

// openEnvelope verifies a DSSE envelope's signature with pub, by DSSE's pre-authentication
// encoding and the standard library alone, and returns its in-toto statement.
func openEnvelope(pub *ecdsa.PublicKey, data []byte) (statement, error) {
	var env struct {
		PayloadType string `json:"payloadType"`
		Payload     string `json:"payload"`
		Signatures  []struct {
			Sig string `json:"sig"`
		} `json:"signatures"`
	}
	var st statement
	if err := json.Unmarshal(data, &env); err != nil {
		return st, err
	}
	body, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil || env.PayloadType != "application/vnd.in-toto+json" || len(env.Signatures) != 1 {
		return st, fmt.Errorf("not a signed in-toto envelope: %s (%v)", data, err)
	}
	sig, err := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
	if err != nil {
		return st, err
	}
	pae := fmt.Sprintf("DSSEv1 %d %s %d %s", len(env.PayloadType), env.PayloadType, len(body), body)
	digest := sha256.Sum256([]byte(pae))
	if !ecdsa.VerifyASN1(pub, digest[:], sig) {
		return st, fmt.Errorf("the envelope's signature does not verify")
	}
	return st, json.Unmarshal(body, &st)
}

// checkProvenance verifies, with the standard library alone and the published cosign.pub, that
// each artifact of res carries a signed SLSA provenance of its digest in cosign's format, and
// that the CLI's provenance file names every archive of SHA256SUMS; each of the release of version
// built from revision.
func checkProvenance(t *testing.T, reg image.Registry, out, version, revision string, res Result) {
	t.Helper()
	pub := publishedKey(t, out)
	check := func(what string, st statement) {
		t.Helper()
		def := st.Predicate.BuildDefinition
		if st.Type != "https://in-toto.io/Statement/v1" || st.PredicateType != ProvenancePredicateType ||
			def.BuildType != ProvenanceBuildType || def.ExternalParameters["version"] != version ||
			st.Predicate.RunDetails.Builder.ID != ProvenanceBuilder {
			t.Errorf("the provenance of %s: %+v", what, st)
		}
		commit, dirty := strings.CutSuffix(revision, "-dirty")
		var source []string
		for _, d := range def.ResolvedDependencies {
			source = append(source, d.Digest["gitCommit"])
		}
		if def.ExternalParameters["dirty"] != dirty || (commit != "" && !slices.Equal(source, []string{commit})) ||
			(commit == "" && len(source) != 0) {
			t.Errorf("the provenance of %s names the source %+v, dirty %v; want commit %s", what, def.ResolvedDependencies, def.ExternalParameters["dirty"], revision)
		}
	}
	if len(res.Attestations) != len(res.signed()) {
		t.Fatalf("attestations %v, want one for each of %v", res.Attestations, res.signed())
	}
	for _, ref := range res.signed() {
		repo, digest, _ := strings.Cut(ref, "@")
		att, err := image.Pull(context.Background(), reg, repo+":"+image.AttestationTag(digest))
		if err != nil {
			t.Fatalf("the attestation of %s: %v", ref, err)
		}
		layers, err := att.Layers()
		if err != nil || len(layers) != 1 {
			t.Fatalf("the attestation of %s has %d layers (%v), want 1", ref, len(layers), err)
		}
		mt, err := layers[0].MediaType()
		if err != nil || mt != image.AttestationPayloadType {
			t.Errorf("the attestation of %s is a %s (%v)", ref, mt, err)
		}
		st, err := openEnvelope(pub, readLayer(t, layers[0]))
		if err != nil {
			t.Fatalf("the attestation of %s: %v", ref, err)
		}
		if len(st.Subject) != 1 || st.Subject[0].Name != repo || "sha256:"+st.Subject[0].Digest["sha256"] != digest {
			t.Errorf("the attestation of %s is of %+v", ref, st.Subject)
		}
		check(ref, st)
	}
	data, err := os.ReadFile(filepath.Join(out, ProvenanceName(version)))
	if err != nil {
		t.Fatal(err)
	}
	st, err := openEnvelope(pub, data)
	if err != nil {
		t.Fatalf("%s: %v", ProvenanceName(version), err)
	}
	check(ProvenanceName(version), st)
	sums, err := os.ReadFile(filepath.Join(out, ChecksumsFile))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, s := range st.Subject {
		listed = append(listed, s.Digest["sha256"]+"  "+s.Name)
	}
	if want := strings.Split(strings.TrimSpace(string(sums)), "\n"); !slices.Equal(listed, want) {
		t.Errorf("%s is of %q, want the archives of %s: %q", ProvenanceName(version), listed, ChecksumsFile, want)
	}
}

// publishedKey reads the release's cosign.pub of out.
func publishedKey(t *testing.T, out string) *ecdsa.PublicKey {
	t.Helper()
	pubPEM, err := os.ReadFile(filepath.Join(out, PublicKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(pubPEM)
	if block == nil {
		t.Fatalf("%s holds no PEM block", PublicKeyFile)
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return key.(*ecdsa.PublicKey)
}

// readLayer is a layer's uncompressed content.
func readLayer(t *testing.T, l interface{ Uncompressed() (io.ReadCloser, error) }) []byte {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
