package harness

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
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

var (
	portsMu sync.Mutex
	// portsGiven are the ports handed out by this test binary: the kernel
	// may offer a port again once the probe closed it, before the process
	// it was meant for has bound it.
	portsGiven = map[int]bool{}
)

func localFreePort() (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("finding a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if !portsGiven[port] {
			portsGiven[port] = true
			return port, nil
		}
	}
	return 0, fmt.Errorf("finding a free port: no new port after 100 tries")
}
