package localcluster

import (
	"context"
	"fmt"
	"slices"
)

// Kill sends SIGKILL to the component called name (etcd, kube-apiserver, ...), as a
// crash does, and waits until it has exited and freed its ports. The cluster's state keeps the component,
// for Restart to start it again.
func (c *Cluster) Kill(name string) error {
	p, err := c.component(name)
	if err != nil {
		return err
	}
	return p.stop(0)
}

// Restart starts the component called name again, with the binary and arguments it ran with.
// It is attached to the calling process as it was started. When the API server runs, Restart
// waits until it is ready again.
func (c *Cluster) Restart(ctx context.Context, name string, attached bool) error {
	p, err := c.component(name)
	if err != nil {
		return err
	}
	if !p.released() {
		return fmt.Errorf("%s (pid %d) still runs: kill it first", name, p.PID)
	}
	started, err := startProcess(c.Dir, p.Name, p.Binary, p.Args, p.Env, attached)
	if err != nil {
		return err
	}
	*p = *started
	if err := c.saveState(); err != nil {
		return err
	}
	apiServer, err := c.component("kube-apiserver")
	if err != nil || !apiServer.Alive() {
		return err // nothing to wait for: it starts after this one
	}
	admin, err := c.RESTConfig()
	if err != nil {
		return err
	}
	return c.waitAPIServerReady(ctx, apiServer, admin)
}

// component is the recorded process called name.
func (c *Cluster) component(name string) (*Process, error) {
	i := slices.IndexFunc(c.Processes, func(p *Process) bool { return p.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("the local cluster has no component %q", name)
	}
	return c.Processes[i], nil
}
