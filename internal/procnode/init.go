// Package procnode is a Kubernetes node whose pods' containers run as
// processes of the machine. Each image is pulled from its registry and
// unpacked, and each container runs confined to its own copy of it (a mount
// namespace and chroot, as the image's non-root user). A container gets the
// pod's command, environment, volumes and projected ServiceAccount token, a
// /dev of its own holding the machine's device nodes, a writable /tmp and a
// termination message file. It is built on virtual-kubelet's node library,
// which registers the node and syncs pods with the API server; this package
// is the provider that runs them. The local cluster runs operator and
// builder pods on it.
package procnode

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// containerSpec is what the node hands to the container's init: the
// process to start and its confinement. It is written as JSON to a file.
type containerSpec struct {
	// Root is the host path of the container's root filesystem.
	Root string `json:"root"`
	// ReadOnlyRoot remounts Root read-only once the mounts are in place.
	ReadOnlyRoot bool    `json:"readOnlyRoot"`
	Mounts       []mount `json:"mounts"`
	UID          int     `json:"uid"`
	GID          int     `json:"gid"`
	// Hostname is the container's host name (the pod's name), in a UTS
	// namespace of its own.
	Hostname string `json:"hostname"`
	// Dir is the working directory inside the container.
	Dir  string   `json:"dir"`
	Args []string `json:"args"`
	Env  []string `json:"env"`
	// UserNamespace says the init runs in a user namespace of its own, as
	// root there and the node's user outside: it keeps that user.
	UserNamespace bool `json:"userNamespace"`
}

// mount binds a host path into the container.
type mount struct {
	Source   string `json:"source"`
	Target   string `json:"target"` // path inside the container
	ReadOnly bool   `json:"readOnly"`
}

// InitCommand is the hidden caravan command that runs Init.
const InitCommand = "container-init"

// Init confines the calling process as specPath says and replaces it with
// the container's process. It runs in a fresh mount namespace (the node
// starts it so); it returns only on failure.
func Init(specPath string) error {
	data, err := os.ReadFile(specPath)
	if err != nil {
		return fmt.Errorf("reading the container spec: %w", err)
	}
	var s containerSpec
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("reading the container spec: %w", err)
	}
	if len(s.Args) == 0 {
		return errors.New("the container has no command")
	}
	if err := confine(s); err != nil {
		return err
	}
	path, err := lookPath(s.Args[0], s.Env)
	if err != nil {
		return err
	}
	if err := syscall.Exec(path, s.Args, s.Env); err != nil {
		return fmt.Errorf("starting %s: %w", s.Args[0], err)
	}
	return nil
}

func orRoot(dir string) string {
	if dir == "" {
		return "/"
	}
	return dir
}

// lookPath finds name in the container's PATH when it has no slash.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			path = v
		}
	}
	for dir := range strings.SplitSeq(path, ":") {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	// runc's words, which a kubelet's container status quotes.
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH", name)
}
