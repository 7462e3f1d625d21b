// Package local holds `caravan local`: a Kubernetes control plane on this
// machine, with simulated nodes, for trying and testing Caravan.
package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/caravan-dev/caravan/internal/localcluster"
)

// DirEnv overrides the default state directory of the local cluster.
const DirEnv = "CARAVAN_LOCAL_DIR"

// NewCmdLocal builds `caravan local`.
func NewCmdLocal(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "local",
		Short: "Run a local Kubernetes cluster for Caravan",
		Long: `Run a real Kubernetes control plane on this machine: etcd, kube-apiserver,
kube-controller-manager, kube-scheduler, and kwok, which simulates nodes so
that pods reach Running without a container runtime.

The binaries are built from their Go modules on first use (several minutes)
and kept in a cache (CARAVAN_CACHE_DIR, default ~/.cache/caravan). The
cluster's state lives in CARAVAN_LOCAL_DIR (default ~/.local/state/caravan/local).`,
	}
	cmd.AddCommand(
		newCmdUp(streams),
		newCmdDown(streams),
		newCmdStatus(streams),
		newCmdKubeconfig(streams),
		newCmdBuild(streams),
		newCmdKubectl(streams),
		newCmdNode(),
		newCmdProvisioner(),
		newCmdContainerInit(),
	)
	return cmd
}

// dirOptions are what every local subcommand's Options start from: the
// directories of the cluster and of the binary cache, and the streams.
type dirOptions struct {
	dirFlags
	genericiooptions.IOStreams
}

// Complete fills in the default directories.
func (o *dirOptions) Complete() error { return o.complete() }

// Validate accepts any directories: a missing cluster or cache is
// reported, with what to run, when the command reads it.
func (o *dirOptions) Validate() error { return nil }

// dirFlags are the flags that locate the cluster and the binary cache.
type dirFlags struct {
	Dir      string
	CacheDir string
}

func (f *dirFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.Dir, "dir", "", "state directory of the local cluster (default $"+DirEnv+" or ~/.local/state/caravan/local)")
	cmd.Flags().StringVar(&f.CacheDir, "cache-dir", "", "directory of the built cluster binaries (default $CARAVAN_CACHE_DIR or ~/.cache/caravan)")
}

// DefaultDir is the state directory of the local cluster: $CARAVAN_LOCAL_DIR,
// or caravan/local under the user's state directory.
func DefaultDir() (string, error) {
	if dir := os.Getenv(DirEnv); dir != "" {
		return dir, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the home directory (use --dir): %w", err)
	}
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" {
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "caravan", "local"), nil
}

// Running returns the local cluster whose API server is server, if one
// runs from the default state directory.
func Running(server string) *localcluster.Cluster {
	dir, err := DefaultDir()
	if err != nil {
		return nil
	}
	c, err := localcluster.Load(dir)
	if err != nil || !c.AnyAlive() || c.Server != server {
		return nil
	}
	return c
}

func (f *dirFlags) complete() error {
	if f.Dir == "" {
		dir, err := DefaultDir()
		if err != nil {
			return err
		}
		f.Dir = dir
	}
	abs, err := filepath.Abs(f.Dir)
	if err != nil {
		return err
	}
	f.Dir = abs
	if f.CacheDir == "" {
		dir, err := localcluster.DefaultCacheDir()
		if err != nil {
			return err
		}
		f.CacheDir = dir
	}
	return nil
}

// loadRunning loads the cluster in dir, with an error a user can act on
// when there is none.
func loadRunning(dir string) (*localcluster.Cluster, error) {
	c, err := localcluster.Load(dir)
	if errors.Is(err, localcluster.ErrNotRunning) {
		return nil, fmt.Errorf("no local cluster runs from %s; start one with `caravan local up`", dir)
	}
	if err != nil {
		return nil, err
	}
	if !c.AnyAlive() {
		return nil, fmt.Errorf("the local cluster in %s is not running any more; run `caravan local down` then `caravan local up`", dir)
	}
	return c, nil
}
