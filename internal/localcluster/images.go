package localcluster

import (
	"context"
	"fmt"
	"time"

	"github.com/caravan-dev/caravan/internal/debimage"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// pushDebianImages builds the runtime's images unless cached, and pushes them
// to the cluster's registry under their repositories.
func (c *Cluster) pushDebianImages(ctx context.Context, opts Options) error {
	reg := image.Registry{Address: c.RegistryAddress, Insecure: true}
	for _, img := range runtime.Images {
		start := time.Now()
		ref, _, err := debimage.Push(ctx, opts.CacheDir, img, reg, c.RegistryAddress, opts.Progress)
		if err != nil {
			return err
		}
		fmt.Fprintf(opts.Progress, "  pushed %s (%s)\n", ref, time.Since(start).Round(100*time.Millisecond))
	}
	return nil
}
