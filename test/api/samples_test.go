package api_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

const samplesDir = "../../config/samples"

func readSamples(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(samplesDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples in %s: %v", samplesDir, err)
	}
	samples := map[string]*unstructured.Unstructured{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		samples[filepath.Base(f)] = u
	}
	return samples
}

// TestEverySampleAppliesAndKeepsEveryField applies each Camel K style
// sample, reads it back, then writes it once more through Caravan's Go
// types (as a controller would), and checks that no field was lost on
// either path, including trait keys Caravan does not know.
func TestEverySampleAppliesAndKeepsEveryField(t *testing.T) {
	ns := env.Namespace(t)
	ctx := context.Background()
	samples := readSamples(t)
	kinds := map[string]bool{}
	for _, name := range sortedKeys(samples) {
		sample := samples[name]
		kinds[sample.GetKind()] = true
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			obj := sample.DeepCopy()
			if obj.GetKind() != "IntegrationOperator" {
				obj.SetNamespace(ns)
			} else {
				obj.SetName(obj.GetName() + "-" + ns[len(ns)-6:])
				t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
			}
			g.Expect(env.Client.Create(ctx, obj)).To(Succeed())

			read := &unstructured.Unstructured{}
			read.SetGroupVersionKind(obj.GroupVersionKind())
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), read)).To(Succeed())
			g.Expect(missingFields(sample.Object["spec"], read.Object["spec"], "spec")).To(BeEmpty(),
				"fields lost by the API server")

			typed, err := env.Client.Scheme().New(obj.GroupVersionKind())
			g.Expect(err).NotTo(HaveOccurred())
			typedObj := typed.(client.Object)
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), typedObj)).To(Succeed())
			typedObj.SetLabels(map[string]string{"round-trip": "typed"})
			g.Expect(env.Client.Update(ctx, typedObj)).To(Succeed())

			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), read)).To(Succeed())
			g.Expect(read.GetLabels()).To(HaveKeyWithValue("round-trip", "typed"))
			g.Expect(missingFields(sample.Object["spec"], read.Object["spec"], "spec")).To(BeEmpty(),
				"fields lost by an update through Caravan's Go types")
		})
	}
	for _, kind := range []string{"Integration", "IntegrationPlatform", "IntegrationKit", "Build",
		"Kamelet", "Pipe", "KameletBinding", "IntegrationOperator"} {
		if !kinds[kind] {
			t.Errorf("config/samples has no %s", kind)
		}
	}
}

// missingFields lists the paths of want that got has not, or has with
// another value.
func missingFields(want, got any, path string) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %v", path, got)}
		}
		var missing []string
		for k, v := range w {
			missing = append(missing, missingFields(v, g[k], path+"."+k)...)
		}
		return missing
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: want %d items, got %v", path, len(w), got)}
		}
		var missing []string
		for i := range w {
			missing = append(missing, missingFields(w[i], g[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return missing
	default:
		if !reflect.DeepEqual(normalise(want), normalise(got)) {
			return []string{fmt.Sprintf("%s: want %v, got %v", path, want, got)}
		}
		return nil
	}
}

// normalise makes numbers from YAML and from JSON comparable.
func normalise(v any) any {
	switch n := v.(type) {
	case int:
		return float64(n)
	case int64:
		return float64(n)
	case float64:
		return n
	}
	return v
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
