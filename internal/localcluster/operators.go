package localcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kwok simulates pods but runs no containers, so on the local cluster an
// installed operator runs as a process of the cluster, recorded in its
// state like the control-plane components: `local status` shows it and
// `local down` stops it.

// OperatorProcessName names the process of operator id in namespace.
func OperatorProcessName(namespace, id string) string {
	return "operator/" + namespace + "/" + id
}

// OperatorEndpoints are the addresses a local operator process serves.
type OperatorEndpoints struct {
	Metrics string `json:"metrics"`
	Probes  string `json:"probes"`
}

// StartOperator runs `<binary> operator` for id in namespace, in the
// background, authenticated with token (its ServiceAccount's), replacing
// a process already running for the same id and namespace.
func (c *Cluster) StartOperator(binary, id, namespace, token string, extraArgs ...string) (*Process, error) {
	unlock, err := lockFile(filepath.Join(c.Dir, "state.lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := c.reload(); err != nil {
		return nil, err
	}
	name := OperatorProcessName(namespace, id)
	if err := c.stopNamed(name); err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(c.Dir, "operators", namespace+"-"+id+".kubeconfig")
	if err := c.writeTokenKubeconfig(kubeconfig, "system:serviceaccount:"+namespace+":"+id+"-operator", token); err != nil {
		return nil, err
	}
	metrics, err := FreePort()
	if err != nil {
		return nil, err
	}
	probes, err := FreePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{"operator", "--kubeconfig", kubeconfig, "--namespace", namespace, "--operator-id", id,
		"--metrics-bind-address", "127.0.0.1:" + strconv.Itoa(metrics),
		"--health-probe-bind-address", "127.0.0.1:" + strconv.Itoa(probes)}, extraArgs...)
	p, err := c.launch(Options{}, name, binary, args)
	if err != nil {
		return nil, err
	}
	p.Endpoints = &OperatorEndpoints{
		Metrics: loopbackURL("http", metrics) + "/metrics", Probes: loopbackURL("http", probes),
	}
	return p, c.saveState()
}

// StopOperator stops the local process of operator id in namespace, and
// reports whether there was one.
func (c *Cluster) StopOperator(id, namespace string) (bool, error) {
	unlock, err := lockFile(filepath.Join(c.Dir, "state.lock"))
	if err != nil {
		return false, err
	}
	defer unlock()
	if err := c.reload(); err != nil {
		return false, err
	}
	name := OperatorProcessName(namespace, id)
	found := false
	for _, p := range c.Processes {
		found = found || p.Name == name
	}
	if err := c.stopNamed(name); err != nil {
		return found, err
	}
	return found, c.saveState()
}

// stopNamed stops and forgets the processes called name.
func (c *Cluster) stopNamed(name string) error {
	kept := c.Processes[:0]
	for _, p := range c.Processes {
		if p.Name != name {
			kept = append(kept, p)
			continue
		}
		if err := p.stop(15 * time.Second); err != nil {
			return err
		}
	}
	c.Processes = kept
	return nil
}

// reload reads the state again: another caravan command may have changed
// it since this one loaded it.
func (c *Cluster) reload() error {
	fresh, err := Load(c.Dir)
	if err != nil {
		return err
	}
	c.State = fresh.State
	return nil
}

func (c *Cluster) writeTokenKubeconfig(path, user, token string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ContextName] = &clientcmdapi.Cluster{Server: c.Server, CertificateAuthorityData: c.ca.certPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[ContextName] = &clientcmdapi.Context{Cluster: ContextName, AuthInfo: user}
	cfg.CurrentContext = ContextName
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return os.Chmod(path, 0o600)
}
