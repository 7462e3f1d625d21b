package localcluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/platform"
)

// startRegistry runs a registry on a loopback port, and pushes a small
// stand-in for the platforms' default base image into it, so that kits
// build on the local cluster without reaching any other registry.
func (c *Cluster) startRegistry(ctx context.Context, opts Options) error {
	port, err := FreePort()
	if err != nil {
		return err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	config := filepath.Join(c.Dir, "registry.yml")
	content := fmt.Sprintf("version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n",
		filepath.Join(c.Dir, "registry"), addr)
	if err := os.WriteFile(config, []byte(content), 0o644); err != nil {
		return err
	}
	p, err := c.launch(opts, "registry", opts.Binaries.Registry, []string{"serve", config})
	if err != nil {
		return err
	}
	err = waitFor(ctx, p, 30*time.Second, func(ctx context.Context) (bool, error) {
		return httpOK(ctx, http.DefaultClient, "http://"+addr+"/v2/")
	})
	if err != nil {
		return err
	}
	c.RegistryAddress = addr
	base, err := random.Image(1024, 1)
	if err != nil {
		return err
	}
	ref := addr + "/" + platform.DefaultBaseImage
	if err := image.Push(ctx, image.Registry{Address: addr, Insecure: true}, ref, base); err != nil {
		return fmt.Errorf("pushing the base image %s: %w", ref, err)
	}
	return nil
}
