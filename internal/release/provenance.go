package release

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	prov1 "github.com/in-toto/attestation/go/predicates/provenance/v1"
	ita1 "github.com/in-toto/attestation/go/v1"
	"github.com/sigstore/sigstore/pkg/signature/dsse"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/operatorimage"
)

// The release's provenance: in-toto statements of SLSA provenance v1, in signed DSSE envelopes.
const (
	// ProvenancePredicateType is SLSA provenance v1's predicate type (cosign's slsaprovenance1).
	ProvenancePredicateType = "https://slsa.dev/provenance/v1"
	// ProvenanceBuildType documents the build the provenance describes and its parameters.
	ProvenanceBuildType = "https://" + operatorimage.ModulePath + "/blob/main/docs/releasing.md#provenance"
	// ProvenanceBuilder identifies what ran the build: the release tool of the source tree.
	ProvenanceBuilder = "https://" + operatorimage.ModulePath + "/hack/release.sh"
	// inTotoPayloadType is the DSSE payload type of an in-toto statement.
	inTotoPayloadType = "application/vnd.in-toto+json"
)

// ProvenanceName is the file of the signed provenance of the CLI's archives of version.
func ProvenanceName(version string) string {
	return "caravan-" + version + ".intoto.jsonl"
}

// attestRelease attaches a signed provenance to each artifact the release signs, and writes the
// provenance of the CLI's archives. It returns the file written.
func attestRelease(ctx context.Context, o Options, res *Result, started time.Time) (string, error) {
	predicate, err := provenance(o, started, time.Now())
	if err != nil {
		return "", err
	}
	res.Attestations = map[string]string{}
	for _, ref := range res.signed() {
		repo, digest, ok := strings.Cut(ref, "@sha256:")
		if !ok {
			return "", fmt.Errorf("%s names no sha256 digest", ref)
		}
		envelope, err := signedStatement(o, predicate, &ita1.ResourceDescriptor{Name: repo, Digest: map[string]string{"sha256": digest}})
		if err != nil {
			return "", err
		}
		att, err := image.PushAttestation(ctx, o.Registry, ref, envelope, ProvenancePredicateType)
		if err != nil {
			return "", fmt.Errorf("attaching the provenance of %s: %w", ref, err)
		}
		res.Attestations[ref] = att
	}
	archives, err := checksummed(filepath.Join(o.OutDir, ChecksumsFile))
	if err != nil {
		return "", err
	}
	envelope, err := signedStatement(o, predicate, archives...)
	if err != nil {
		return "", err
	}
	file := ProvenanceName(o.Version)
	return file, os.WriteFile(filepath.Join(o.OutDir, file), append(envelope, '\n'), 0o644)
}

// provenance is the SLSA provenance of the release o describes, which ran from started to finished.
func provenance(o Options, started, finished time.Time) (*structpb.Struct, error) {
	revision, dirty := strings.CutSuffix(o.Source.Revision, "-dirty")
	external := map[string]any{
		"version":        o.Version,
		"registry":       strings.TrimSuffix(o.Registry.Address+"/"+o.Prefix, "/"),
		"imagePlatforms": platformStrings(o.imagePlatforms()),
		"cliPlatforms":   platformStrings(o.cliPlatforms()),
		"kitImages":      stringsAny(o.KitImages),
		"catalogBase":    o.CatalogBase,
		"dirty":          dirty,
	}
	params, err := structpb.NewStruct(external)
	if err != nil {
		return nil, err
	}
	internal, err := structpb.NewStruct(map[string]any{"go": goruntime.Version()})
	if err != nil {
		return nil, err
	}
	def := &prov1.BuildDefinition{BuildType: ProvenanceBuildType, ExternalParameters: params, InternalParameters: internal}
	if revision != "" {
		def.ResolvedDependencies = []*ita1.ResourceDescriptor{{
			Uri: "git+https://" + operatorimage.ModulePath, Digest: map[string]string{"gitCommit": revision}}}
	}
	p := &prov1.Provenance{BuildDefinition: def, RunDetails: &prov1.RunDetails{
		Builder:  &prov1.Builder{Id: ProvenanceBuilder},
		Metadata: &prov1.BuildMetadata{StartedOn: timestamppb.New(started), FinishedOn: timestamppb.New(finished)},
	}}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("the release's provenance: %w", err)
	}
	data, err := protojson.Marshal(p)
	if err != nil {
		return nil, err
	}
	out := &structpb.Struct{}
	return out, protojson.Unmarshal(data, out)
}

// signedStatement is the DSSE envelope, signed with the release's key, of the in-toto statement
// that predicate, a provenance, is of subjects.
func signedStatement(o Options, predicate *structpb.Struct, subjects ...*ita1.ResourceDescriptor) ([]byte, error) {
	st := &ita1.Statement{Type: ita1.StatementTypeUri, Subject: subjects,
		PredicateType: ProvenancePredicateType, Predicate: predicate}
	if err := st.Validate(); err != nil {
		return nil, fmt.Errorf("the provenance statement: %w", err)
	}
	data, err := protojson.Marshal(st)
	if err != nil {
		return nil, err
	}
	return dsse.WrapSigner(o.SigningKey, inTotoPayloadType).SignMessage(bytes.NewReader(data))
}

// checksummed reads a sha256sum listing into subjects: each file by name, with its SHA-256.
func checksummed(file string) ([]*ita1.ResourceDescriptor, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []*ita1.ResourceDescriptor
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			return nil, fmt.Errorf("%s: %q is not a sha256sum line", file, sc.Text())
		}
		out = append(out, &ita1.ResourceDescriptor{Name: name, Digest: map[string]string{"sha256": sum}})
	}
	return out, sc.Err()
}

// platformStrings are ps as OS/ARCH strings, for a structpb value.
func platformStrings(ps []v1.Platform) []any {
	out := make([]any, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// stringsAny is ss as a list of a structpb value.
func stringsAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
