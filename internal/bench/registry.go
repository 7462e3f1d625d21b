package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/localcluster"
)

// registry is the distribution project's registry, built into the cache
// as the local cluster's is, serving on a free loopback port.
type registry struct {
	address string
	cmd     *exec.Cmd
	exited  chan struct{}
}

func startRegistry(ctx context.Context, dir string) (*registry, error) {
	cacheDir, err := localcluster.DefaultCacheDir()
	if err != nil {
		return nil, err
	}
	bin, err := localcluster.EnsureRegistry(ctx, cacheDir, os.Stderr)
	if err != nil {
		return nil, err
	}
	port, err := localcluster.FreePort()
	if err != nil {
		return nil, err
	}
	dir = filepath.Join(dir, "registry")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	r := &registry{address: "127.0.0.1:" + strconv.Itoa(port), exited: make(chan struct{})}
	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	config := filepath.Join(dir, "config.yml")
	cfg := fmt.Sprintf("version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: true\n"+
		"storage:\n  filesystem:\n    rootdirectory: %q\n  delete:\n    enabled: true\n"+
		"http:\n  addr: %q\n  secret: %q\n", filepath.Join(dir, "storage"), r.address, hex.EncodeToString(secret))
	if err := os.WriteFile(config, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		return nil, err
	}
	r.cmd = exec.Command(bin, "serve", config)
	// REGISTRY_* variables would override the generated configuration.
	r.cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
	r.cmd.Stdout, r.cmd.Stderr = logFile, logFile
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting the registry: %w", err)
	}
	go func() { _ = r.cmd.Wait(); _ = logFile.Close(); close(r.exited) }()
	if err := r.waitReady(ctx); err != nil {
		r.stop()
		return nil, err
	}
	return r, nil
}

func (r *registry) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if httpOK(ctx, "http://"+r.address+"/v2/") {
			return nil
		}
		select {
		case <-r.exited:
			return fmt.Errorf("the registry exited")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("the registry on %s did not answer", r.address)
}

// pushBase pushes a small random image (two layers of 512 bytes) as ref.
func (r *registry) pushBase(ctx context.Context, ref string) error {
	img, err := random.Image(512, 2)
	if err != nil {
		return err
	}
	return image.Push(ctx, image.Registry{Address: r.address, Insecure: true}, r.address+"/"+ref, img)
}

func (r *registry) stop() {
	select {
	case <-r.exited:
		return
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(5 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.exited
	}
}
