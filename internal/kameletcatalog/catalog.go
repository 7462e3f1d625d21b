// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

// Package kameletcatalog reads the Kamelet catalog of a Camel version, the Kamelets of Camel's
// camel-kamelets artifact, and decides which of them an operator applies to its namespace. It is
// pure: the jar is read by the caller, from the image of a kit that holds it.
//
// The rules, for a Kamelet of the catalog and one of the same name in the namespace:
//   - none there: it is applied;
//   - one of the four an earlier Caravan installer shipped, as it shipped it: it is replaced;
//   - one a user made (not labelled camel.apache.org/kamelet.bundled): it is kept;
//   - a bundled one of a newer catalog (another operator's, of a newer Camel): it is kept;
//   - a bundled one whose spec a user, or another operator, changed (a field manager other than
//     FieldManager owns a field of its spec): it is kept;
//   - one equal to the catalog's: it is left as it is, which costs no request;
//   - else it is applied, with FieldManager, which brings it to this catalog's version.
//
// Kamelets a newer catalog drops are left, as on Camel K.
package kameletcatalog

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"reflect"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/config/kamelets"
)

const (
	// BundledLabel marks, "true", a Kamelet installed from a catalog, Camel K's label.
	BundledLabel = "camel.apache.org/kamelet.bundled"
	// VersionAnnotation records the version of the catalog a bundled Kamelet came from.
	VersionAnnotation = "camel.apache.org/catalog.version"
	// FieldManager is the field manager of the catalog's applies.
	FieldManager = "caravan-kamelet-catalog"
	// dir is the folder of the jar that holds the Kamelets.
	dir = "kamelets"
)

// Dependency is the dependency of the catalog of a Camel version, which a kit resolves with Maven.
func Dependency(version string) string {
	return "mvn:org.apache.camel.kamelets:camel-kamelets:" + version
}

// JarName is the file name of the catalog's jar in a kit.
func JarName(version string) string { return "camel-kamelets-" + version + ".jar" }

// Read returns the Kamelets of a camel-kamelets jar, labelled and annotated as bundled from the
// catalog version, in the jar's order. A file that is not a Kamelet is an error naming it.
func Read(jar []byte, version string) ([]*camelv1.Kamelet, error) {
	zr, err := zip.NewReader(bytes.NewReader(jar), int64(len(jar)))
	if err != nil {
		return nil, fmt.Errorf("reading the catalog jar: %w", err)
	}
	var out []*camelv1.Kamelet
	for _, f := range zr.File {
		if path.Dir(f.Name) != dir || !strings.HasSuffix(f.Name, ".kamelet.yaml") {
			continue
		}
		k, err := readKamelet(f)
		if err != nil {
			return nil, fmt.Errorf("the catalog's %s: %w", f.Name, err)
		}
		if k.Labels == nil {
			k.Labels = map[string]string{}
		}
		if k.Annotations == nil {
			k.Annotations = map[string]string{}
		}
		k.Labels[BundledLabel] = "true"
		k.Annotations[VersionAnnotation] = version
		out = append(out, k)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the catalog jar holds no %s/*.kamelet.yaml", dir)
	}
	return out, nil
}

func readKamelet(f *zip.File) (*camelv1.Kamelet, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	content, err := io.ReadAll(rc)
	if err != nil {
		return nil, err
	}
	k := &camelv1.Kamelet{}
	if err := yaml.Unmarshal(content, k); err != nil {
		return nil, err
	}
	if k.Kind != "Kamelet" || k.Name == "" {
		return nil, fmt.Errorf("not a Kamelet (kind %q, name %q)", k.Kind, k.Name)
	}
	k.APIVersion = camelv1.GroupVersion.String()
	return k, nil
}

// Verdict is what becomes of a Kamelet of the catalog, given the one of its name in the namespace.
type Verdict string

// The verdicts.
const (
	Apply           Verdict = "applied"
	Current         Verdict = "already current"
	ReplaceStarter  Verdict = "in place of the installer's"
	KeptUserMade    Verdict = "kept, not from a catalog"
	KeptNewer       Verdict = "kept from a newer catalog"
	KeptUserChanged Verdict = "kept as a user changed it"
)

// Judge decides what becomes of want, a Kamelet of catalog version, given existing, the Kamelet of
// its name in the namespace (nil for none), read with its managed fields.
func Judge(existing, want *camelv1.Kamelet, version string) Verdict {
	switch {
	case existing == nil:
		return Apply
	case existing.Labels[BundledLabel] != "true":
		if IsStarter(existing) {
			return ReplaceStarter
		}
		return KeptUserMade
	case newer(existing.Annotations[VersionAnnotation], version):
		return KeptNewer
	case changedByOthers(existing.ManagedFields):
		return KeptUserChanged
	case want != nil && sameSpec(existing, want) &&
		holds(existing.Labels, want.Labels) && holds(existing.Annotations, want.Annotations):
		return Current
	}
	return Apply
}

// sameSpec tells whether a and b have the same spec as JSON values: key order and spacing aside.
func sameSpec(a, b *camelv1.Kamelet) bool {
	va, errA := jsonValue(a.Spec)
	vb, errB := jsonValue(b.Spec)
	return errA == nil && errB == nil && reflect.DeepEqual(va, vb)
}

func jsonValue(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(raw, &out)
}

// holds tells whether have has every entry of want.
func holds(have, want map[string]string) bool {
	for k, v := range want {
		if w, ok := have[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// IsStarter tells whether k is one of the Kamelets Caravan's installer shipped before the
// catalog, unchanged: Caravan's provider annotation and the spec the installer wrote.
func IsStarter(k *camelv1.Kamelet) bool {
	if k.Annotations[providerAnnotation] != starterProvider {
		return false
	}
	starters, err := starters()
	if err != nil {
		return false
	}
	for _, s := range starters {
		if s.Name == k.Name {
			return sameSpec(s, k)
		}
	}
	return false
}

// starters are the installer's four Kamelets, decoded once: IsStarter is asked of every Kamelet
// the catalog meets and of each one deleted.
var starters = sync.OnceValues(kamelets.Catalog)

const (
	providerAnnotation = "camel.apache.org/provider"
	starterProvider    = "Caravan"
)

// newer tells whether catalog version a is newer than b; a version that does not parse is not.
func newer(a, b string) bool {
	va, errA := utilversion.ParseGeneric(a)
	vb, errB := utilversion.ParseGeneric(b)
	return errA == nil && errB == nil && va.GreaterThan(vb)
}

// changedByOthers tells whether a field manager other than FieldManager owns a field of the spec.
func changedByOthers(fields []metav1.ManagedFieldsEntry) bool {
	for _, f := range fields {
		if f.Manager == FieldManager || f.Subresource != "" || f.FieldsV1 == nil {
			continue
		}
		if bytes.Contains(f.FieldsV1.Raw, []byte(`"f:spec"`)) {
			return true
		}
	}
	return false
}
