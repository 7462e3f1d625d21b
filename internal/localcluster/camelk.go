package localcluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// CamelKVersion is the release of Camel K whose operator the tests run beside
// Caravan's: its kamel binary is built from the Go module proxy.
const CamelKVersion = "v2.10.1"

// CamelK is Camel K's release as the cache holds it.
type CamelK struct {
	// Kamel is Camel K's CLI, which also runs its operator (kamel operator).
	Kamel string
	// CRDs is the directory of Camel K's CustomResourceDefinitions, one
	// file per kind.
	CRDs string
	// Catalog is the CamelCatalog that Camel K's operator reads for its
	// default runtime.
	Catalog string
	// OperatorRoles is the directory of the ClusterRoles Camel K's install
	// grants its operator when it watches the whole cluster.
	OperatorRoles string
}

// camelKModule is Camel K's Go module.
const camelKModule = "github.com/apache/camel-k/v2"

// camelKCatalog is the CamelCatalog of Camel K's default runtime, in its module.
const camelKCatalog = "pkg/resources/resources/camel-catalog-3.15.3.yaml"

func camelKComponent() component {
	return component{
		name:     "camel-k",
		version:  CamelKVersion,
		packages: []string{camelKModule + "/cmd/kamel"},
		outputs:  []string{"kamel", "crds", "camel-catalog.yaml", "operator-roles"},
		after:    copyCamelKResources,
		note:     "Camel K's operator, for the tests that run it beside Caravan's",
		// Static, as Camel K's release builds it: it runs in images of another libc.
		env: []string{"CGO_ENABLED=0"},
	}
}

// EnsureCamelK builds Camel K's kamel into the cache (DefaultCacheDir) when it lacks it and
// returns where the release's files are. Progress goes to out.
func EnsureCamelK(ctx context.Context, out io.Writer) (CamelK, error) {
	cacheDir, err := DefaultCacheDir()
	if err != nil {
		return CamelK{}, err
	}
	c := camelKComponent()
	if err := ensure(ctx, cacheDir, out, []component{c}); err != nil {
		return CamelK{}, err
	}
	dir := c.dir(cacheDir)
	return CamelK{
		Kamel:         filepath.Join(dir, "kamel"),
		CRDs:          filepath.Join(dir, "crds"),
		Catalog:       filepath.Join(dir, "camel-catalog.yaml"),
		OperatorRoles: filepath.Join(dir, "operator-roles"),
	}, nil
}

// camelKOperatorRoles are the ClusterRoles, in Camel K's module, that its install grants its
// operator for the whole cluster: its rights on what it makes, and on Events.
var camelKOperatorRoles = []string{
	"pkg/resources/config/rbac/descoped/operator-cluster-role.yaml",
	"pkg/resources/config/rbac/descoped/operator-cluster-role-events.yaml",
}

// copyCamelKResources copies Camel K's CRDs, its CamelCatalog and its operator's ClusterRoles from
// its module into outDir.
func copyCamelKResources(ctx context.Context, srcDir, outDir string) error {
	module, err := moduleDir(ctx, srcDir, camelKModule)
	if err != nil {
		return err
	}
	crds, err := filepath.Glob(filepath.Join(module, "pkg/resources/config/crd/bases/*.yaml"))
	if err != nil || len(crds) == 0 {
		return fmt.Errorf("finding Camel K's CRDs in %s: none found", module)
	}
	if err := os.MkdirAll(filepath.Join(outDir, "crds"), 0o755); err != nil {
		return err
	}
	for _, f := range crds {
		if err := copyFile(f, filepath.Join(outDir, "crds", filepath.Base(f))); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(outDir, "operator-roles"), 0o755); err != nil {
		return err
	}
	for _, f := range camelKOperatorRoles {
		if err := copyFile(filepath.Join(module, f), filepath.Join(outDir, "operator-roles", filepath.Base(f))); err != nil {
			return err
		}
	}
	return copyFile(filepath.Join(module, camelKCatalog), filepath.Join(outDir, "camel-catalog.yaml"))
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return fmt.Errorf("reading %s: %w", from, err)
	}
	return os.WriteFile(to, data, 0o644)
}
