// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package crd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
)

// TestSamplesRoundTrip checks that every sample decodes into its Go type and encodes back
// without losing or changing anything, including the keys Caravan does not model.
func TestSamplesRoundTrip(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := camelv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := camelv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(repoRoot, "config/samples/*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var original map[string]any
			if err := yaml.Unmarshal(data, &original); err != nil {
				t.Fatal(err)
			}
			gvk := schema.FromAPIVersionAndKind(original["apiVersion"].(string), original["kind"].(string))
			seen[gvk.Kind] = true
			obj, err := scheme.New(gvk)
			if err != nil {
				t.Fatalf("no Go type for %s: %v", gvk, err)
			}
			if err := yaml.UnmarshalStrict(data, obj); err != nil {
				t.Fatalf("decoding into %T: %v", obj, err)
			}
			assertSameJSON(t, original, obj)
			assertSameJSON(t, original, obj.DeepCopyObject())
			assertSameUnstructured(t, original, obj)
		})
	}
	for _, want := range expectedCRDs {
		if !seen[want.kind] {
			t.Errorf("no sample for %s", want.kind)
		}
	}
}

// assertSameUnstructured checks the conversions controller-runtime uses for unstructured
// objects and server-side apply.
func assertSameUnstructured(t *testing.T, want map[string]any, obj runtime.Object) {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(normalize(t, u), want) {
		t.Errorf("%T does not convert to unstructured losslessly: %v", obj, u)
	}
	back := obj.DeepCopyObject()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(want, back); err != nil {
		t.Fatal(err)
	}
	assertSameJSON(t, want, back)
}

// normalize makes numbers float64, as in a map decoded from JSON.
func normalize(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func assertSameJSON(t *testing.T, want map[string]any, obj runtime.Object) {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		wantJSON, _ := json.MarshalIndent(want, "", "  ")
		gotJSON, _ := json.MarshalIndent(got, "", "  ")
		t.Errorf("%T does not round-trip.\nsample:\n%s\nre-encoded:\n%s", obj, wantJSON, gotJSON)
	}
}
