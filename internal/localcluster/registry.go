package localcluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// startRegistry runs a registry on a loopback port, and pushes the images
// made from Debian's packages into it, so that kits build on the local
// cluster without reaching any other registry.
func (c *Cluster) startRegistry(ctx context.Context, opts Options) error {
	port, err := FreePort()
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(c.HostAddress(), strconv.Itoa(port))
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
	return c.pushDebianImages(ctx, opts)
}
