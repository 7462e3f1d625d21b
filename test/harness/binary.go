package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// BuildCaravan builds the caravan binary from this source tree into dir
// and returns its path, so that end-to-end tests run the CLI as users do.
func BuildCaravan(dir string) (string, error) {
	root := sourceRoot()
	out := filepath.Join(dir, "caravan")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/caravan")
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building caravan: %w", err)
	}
	return out, nil
}

// sourceRoot is the root of Caravan's source tree.
func sourceRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}
