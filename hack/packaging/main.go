// Command packaging writes the generated files of Caravan's Helm chart
// and kustomize base (see internal/packaging), for the chart's
// appVersion, from the root of the source tree:
//
//	go run ./hack/packaging
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/caravan-dev/caravan/internal/packaging"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	ch, err := packaging.LoadChart(".")
	if err != nil {
		return err
	}
	files, err := packaging.Generated(packaging.Release{Version: ch.Metadata.AppVersion})
	if err != nil {
		return err
	}
	// A CRD that is gone must not stay in the chart or the bundle.
	var stale []string
	for _, dir := range []string{filepath.Join(packaging.ChartDir, "crds"), filepath.Join(packaging.BundleDir, "manifests")} {
		found, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			return err
		}
		stale = append(stale, found...)
	}
	for _, f := range stale {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	for path, data := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("wrote %d files under %s, %s, %s, %s and %s\n", len(files), packaging.ChartDir, packaging.KustomizeDir,
		packaging.MonitoringDir, packaging.BundleDir, packaging.OLMAdmissionDir)
	return nil
}
