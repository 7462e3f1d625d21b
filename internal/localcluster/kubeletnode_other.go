//go:build !linux

package localcluster

import "errors"

// errNoKubeletNode says why the kubelet node runs on Linux only.
var errNoKubeletNode = errors.New("the kubelet node runs on Linux only")

func createBridge(string, string) error { return errNoKubeletNode }

func (c *Cluster) cleanKubeletNode() error { return nil }
